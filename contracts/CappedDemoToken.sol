// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {SprayToken} from "./SprayToken.sol";

/// @title CappedDemoToken
/// @notice A DemoToken with a maximum supply exposed as `cap()` (OpenZeppelin ERC20Capped style);
/// `mint` reverts past the cap. Kept a separate contract so that DemoToken has no `cap()` at all.
contract CappedDemoToken is SprayToken {
    error ZeroCap();

    string public name;
    string public symbol;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 initialSupply, uint256 cap_)
        SprayToken(decimals_, initialSupply, _nonZero(cap_))
    {
        name = name_;
        symbol = symbol_;
    }

    function cap() external view returns (uint256) {
        return _maxSupply;
    }

    function _nonZero(uint256 cap_) private pure returns (uint256) {
        if (cap_ == 0) revert ZeroCap();
        return cap_;
    }
}
