// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {SprayToken} from "./SprayToken.sol";

/// @title HostileTextToken
/// @notice An ERC-20 whose `name()` is as long as its deployer likes (a 32-byte word repeated
/// to `nameLength` bytes, built at call time so deployment stays cheap) and whose `symbol()` is
/// any string, control characters included: what a hostile token can answer an indexer.
contract HostileTextToken is SprayToken {
    bytes32 private immutable _nameWord;
    uint256 private immutable _nameLength;
    string public symbol;

    constructor(
        bytes32 nameWord,
        uint256 nameLength,
        string memory symbol_,
        uint8 decimals_,
        uint256 initialSupply
    ) SprayToken(decimals_, initialSupply, 0) {
        _nameWord = nameWord;
        _nameLength = nameLength;
        symbol = symbol_;
    }

    /// @dev ABI-encodes the string in place and returns it, without a second copy in memory.
    function name() external view returns (string memory) {
        bytes32 word = _nameWord;
        uint256 length = _nameLength;
        assembly {
            let ptr := mload(0x40)
            mstore(ptr, 0x20)
            mstore(add(ptr, 0x20), length)
            let data := add(ptr, 0x40)
            let padded := and(add(length, 31), not(31))
            for { let i := 0 } lt(i, padded) { i := add(i, 32) } { mstore(add(data, i), word) }
            return(ptr, add(0x40, padded))
        }
    }
}
