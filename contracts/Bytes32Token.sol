// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {SprayToken} from "./SprayToken.sol";

/// @title Bytes32Token
/// @notice An ERC-20 whose `name()` and `symbol()` return bytes32, as MKR and SAI do.
/// The text is left-aligned and padded with NUL bytes.
contract Bytes32Token is SprayToken {
    bytes32 public immutable name;
    bytes32 public immutable symbol;

    constructor(bytes32 name_, bytes32 symbol_, uint8 decimals_, uint256 initialSupply)
        SprayToken(decimals_, initialSupply, 0)
    {
        name = name_;
        symbol = symbol_;
    }
}
