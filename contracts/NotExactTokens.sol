// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice Test tokens whose `balanceOf` moves without a log per holder, written for the tests of
/// issue #18: what an index of `Transfer` logs cannot follow, and must therefore name as not exact.
/// Each is as small as its behaviour allows; none is any real token's code.

/// Shared ERC-20 surface: metadata and the `Transfer` event.
abstract contract LoggedToken {
    uint8 public constant decimals = 18;
    event Transfer(address indexed from, address indexed to, uint256 value);

    function name() external pure virtual returns (string memory);
    function symbol() external pure virtual returns (string memory);
}

/// Ampleforth-style rebasing: balances are fixed shares of a supply that `rebase` changes, for
/// every holder at once, with no log per holder.
contract RebasingToken is LoggedToken {
    uint256 private constant SHARES = 10 ** 40;
    uint256 public totalSupply;
    mapping(address => uint256) private shares;

    constructor(uint256 supply) {
        totalSupply = supply;
        shares[msg.sender] = SHARES;
        emit Transfer(address(0), msg.sender, supply);
    }

    function name() external pure override returns (string memory) { return "Rebasing"; }
    function symbol() external pure override returns (string memory) { return "REB"; }

    function balanceOf(address who) public view returns (uint256) {
        return shares[who] * totalSupply / SHARES;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 moved = amount * SHARES / totalSupply;
        shares[msg.sender] -= moved;
        shares[to] += moved;
        emit Transfer(msg.sender, to, amount);
        return true;
    }

    /// The supply (and every balance with it) changes; no Transfer is logged.
    function rebase(uint256 newSupply) external {
        totalSupply = newSupply;
    }
}

/// stETH-style shares: balances are shares of a pooled amount that `accrue` raises.
contract SharesToken is LoggedToken {
    uint256 public totalShares;
    uint256 public pooled;
    mapping(address => uint256) private shares;

    constructor(uint256 supply) {
        totalShares = supply;
        pooled = supply;
        shares[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function name() external pure override returns (string memory) { return "Shares"; }
    function symbol() external pure override returns (string memory) { return "SHR"; }
    function totalSupply() external view returns (uint256) { return pooled; }

    function balanceOf(address who) public view returns (uint256) {
        return shares[who] * pooled / totalShares;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 moved = amount * totalShares / pooled;
        shares[msg.sender] -= moved;
        shares[to] += moved;
        emit Transfer(msg.sender, to, amount);
        return true;
    }

    /// Rewards raise every holder's balance; no Transfer is logged.
    function accrue(uint256 amount) external {
        pooled += amount;
    }
}

/// Reflection ("RFI") style: each transfer's 2 % fee is spread over every holder at once; the
/// `Transfer` log names the amount the recipient gets, while the sender loses the whole amount.
contract ReflectionToken is LoggedToken {
    uint256 public constant totalSupply = 10 ** 30;
    uint256 private rTotal = (type(uint256).max - (type(uint256).max % totalSupply));
    mapping(address => uint256) private rOwned;

    constructor() {
        rOwned[msg.sender] = rTotal;
        emit Transfer(address(0), msg.sender, totalSupply);
    }

    function name() external pure override returns (string memory) { return "Reflection"; }
    function symbol() external pure override returns (string memory) { return "RFL"; }

    function balanceOf(address who) public view returns (uint256) {
        return rOwned[who] / (rTotal / totalSupply);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 rate = rTotal / totalSupply;
        uint256 fee = amount / 50;
        rOwned[msg.sender] -= amount * rate;
        rOwned[to] += (amount - fee) * rate;
        rTotal -= fee * rate;
        emit Transfer(msg.sender, to, amount - fee);
        return true;
    }
}

/// A fee-burning token: each transfer burns 1 % of the amount, which no log records.
contract FeeBurnToken is LoggedToken {
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function name() external pure override returns (string memory) { return "Fee Burn"; }
    function symbol() external pure override returns (string memory) { return "FEE"; }

    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 fee = amount / 100;
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount - fee;
        totalSupply -= fee;
        emit Transfer(msg.sender, to, amount - fee);
        return true;
    }
}
