// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title DepositVault
/// @notice A test token that wraps ether like WETH9 but logs each change twice: a WETH9-style
/// `Deposit(address indexed dst, uint wad)` beside a `Transfer` mint from the zero address, and a
/// `Withdrawal(address indexed src, uint wad)` beside a `Transfer` burn to it (as vault tokens
/// do). An indexer that applies both counts every deposit twice; tokenquery must count it once.
/// `depositFor` logs the depositor's `Deposit` but mints to another address, and `depositTwice`
/// two deposits and mints in one transaction: cases the pairing rule must get right too.
contract DepositVault {
    string public constant name = "Deposit Vault";
    string public constant symbol = "DVLT";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Deposit(address indexed dst, uint256 wad);
    event Withdrawal(address indexed src, uint256 wad);

    function deposit() external payable {
        _mint(msg.sender, msg.sender, msg.value);
    }

    /// Logs `Deposit(msg.sender)` but mints to `to`: still one change, counted once.
    function depositFor(address to) external payable {
        _mint(msg.sender, to, msg.value);
    }

    function depositTwice() external payable {
        uint256 half = msg.value / 2;
        _mint(msg.sender, msg.sender, half);
        _mint(msg.sender, msg.sender, msg.value - half);
    }

    function withdraw(uint256 wad) external {
        require(balanceOf[msg.sender] >= wad, "balance");
        balanceOf[msg.sender] -= wad;
        totalSupply -= wad;
        emit Transfer(msg.sender, address(0), wad);
        emit Withdrawal(msg.sender, wad);
        payable(msg.sender).transfer(wad);
    }

    function transfer(address to, uint256 wad) external returns (bool) {
        require(balanceOf[msg.sender] >= wad, "balance");
        balanceOf[msg.sender] -= wad;
        balanceOf[to] += wad;
        emit Transfer(msg.sender, to, wad);
        return true;
    }

    function _mint(address depositor, address to, uint256 wad) private {
        balanceOf[to] += wad;
        totalSupply += wad;
        emit Deposit(depositor, wad);
        emit Transfer(address(0), to, wad);
    }
}
