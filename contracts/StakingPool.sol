// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title StakingPool
/// @notice A test contract that is not a token but logs the very event WETH9 logs,
/// `Deposit(address indexed dst, uint wad)` (as many staking pools do, PancakeSwap's SmartChef
/// among them). It has no `totalSupply()` or `decimals()`, so tokenquery must not make it a token.
contract StakingPool {
    mapping(address => uint256) public staked;

    event Deposit(address indexed user, uint256 amount);

    function stake() external payable {
        staked[msg.sender] += msg.value;
        emit Deposit(msg.sender, msg.value);
    }
}
