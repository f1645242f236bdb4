// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {SprayToken} from "./SprayToken.sol";

/// @title DemoToken
/// @notice A standard ERC-20 with string name and symbol and configurable decimals.
/// It has no `cap()`: calling it reverts, as on most real tokens.
contract DemoToken is SprayToken {
    string public name;
    string public symbol;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 initialSupply)
        SprayToken(decimals_, initialSupply, 0)
    {
        name = name_;
        symbol = symbol_;
    }
}
