// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title DemoNft
/// @notice A minimal ERC-721: its Transfer events share the ERC-20 topic but carry the token id as a
/// third indexed topic and empty data, so an indexer must tell them apart from fungible transfers.
contract DemoNft {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);

    error NotOwner(address caller, uint256 tokenId);
    error ZeroAddress();

    string public name;
    string public symbol;
    uint256 public totalSupply;
    mapping(uint256 => address) public ownerOf;
    mapping(address => uint256) public balanceOf;

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    /// @notice Mints the next token id (ids start at 1) to `to`.
    function mint(address to) external returns (uint256 tokenId) {
        if (to == address(0)) revert ZeroAddress();
        tokenId = ++totalSupply;
        ownerOf[tokenId] = to;
        ++balanceOf[to];
        emit Transfer(address(0), to, tokenId);
    }

    /// @notice Moves a token the caller owns (no approvals: this is a test fixture).
    function transferFrom(address from, address to, uint256 tokenId) external {
        if (ownerOf[tokenId] != msg.sender || from != msg.sender) revert NotOwner(msg.sender, tokenId);
        if (to == address(0)) revert ZeroAddress();
        ownerOf[tokenId] = to;
        --balanceOf[from];
        ++balanceOf[to];
        emit Transfer(from, to, tokenId);
    }
}
