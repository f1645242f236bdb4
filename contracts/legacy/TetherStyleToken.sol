pragma solidity 0.4.17;

/// @title TetherStyleToken
/// @notice A test model, written here from the public behaviour of Tether's TetherToken (USDT on
/// Ethereum) as its interface and events describe it; it is not Tether's code. What it models,
/// because an indexer that reads `Transfer` logs only gets it wrong:
/// - `issue(amount)` credits the owner and logs `Issue(amount)` with no `Transfer`;
/// - `redeem(amount)` debits the owner and logs `Redeem(amount)` with no `Transfer`;
/// - the owner blacklists an address (`AddedBlackList`), and `destroyBlackFunds(user)` zeroes its
///   balance, logging `DestroyedBlackFunds(user, balance)` with no `Transfer`;
/// - `transferOwnership` moves ownership with no event at all, so whose balance the next `Issue`
///   credits can only be read from `owner()` at that block;
/// - `transfer`/`transferFrom`/`approve` return nothing (the pre-ERC-20-final style), and a
///   blacklisted sender cannot transfer.
/// Unlike the deployed contract it mints nothing in its constructor (TetherToken credited its
/// initial supply to the owner there, with no log; see docs/reliability.md), and it has no fees,
/// pause or upgrade.
/// Compiled with solc 0.4.17, the release TetherToken was compiled with.
contract TetherStyleToken {
    string public name;
    string public symbol;
    uint public decimals;
    uint public totalSupply;
    address public owner;

    mapping(address => uint) balances;
    mapping(address => mapping(address => uint)) allowed;
    mapping(address => bool) public isBlackListed;

    event Transfer(address indexed from, address indexed to, uint value);
    event Approval(address indexed holder, address indexed spender, uint value);
    event Issue(uint amount);
    event Redeem(uint amount);
    event AddedBlackList(address user);
    event RemovedBlackList(address user);
    event DestroyedBlackFunds(address blackListedUser, uint balance);

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    function TetherStyleToken(string _name, string _symbol, uint _decimals) public {
        name = _name;
        symbol = _symbol;
        decimals = _decimals;
        owner = msg.sender;
    }

    function transferOwnership(address newOwner) public onlyOwner {
        if (newOwner != address(0)) {
            owner = newOwner;
        }
    }

    function balanceOf(address who) public constant returns (uint) {
        return balances[who];
    }

    function allowance(address holder, address spender) public constant returns (uint) {
        return allowed[holder][spender];
    }

    function transfer(address to, uint value) public {
        require(!isBlackListed[msg.sender]);
        require(balances[msg.sender] >= value);
        balances[msg.sender] -= value;
        balances[to] += value;
        Transfer(msg.sender, to, value);
    }

    function approve(address spender, uint value) public {
        allowed[msg.sender][spender] = value;
        Approval(msg.sender, spender, value);
    }

    function transferFrom(address from, address to, uint value) public {
        require(!isBlackListed[from]);
        require(balances[from] >= value && allowed[from][msg.sender] >= value);
        allowed[from][msg.sender] -= value;
        balances[from] -= value;
        balances[to] += value;
        Transfer(from, to, value);
    }

    function issue(uint amount) public onlyOwner {
        require(totalSupply + amount > totalSupply);
        require(balances[owner] + amount > balances[owner]);
        balances[owner] += amount;
        totalSupply += amount;
        Issue(amount);
    }

    function redeem(uint amount) public onlyOwner {
        require(totalSupply >= amount);
        require(balances[owner] >= amount);
        totalSupply -= amount;
        balances[owner] -= amount;
        Redeem(amount);
    }

    function addBlackList(address user) public onlyOwner {
        isBlackListed[user] = true;
        AddedBlackList(user);
    }

    function removeBlackList(address user) public onlyOwner {
        isBlackListed[user] = false;
        RemovedBlackList(user);
    }

    function destroyBlackFunds(address blackListedUser) public onlyOwner {
        require(isBlackListed[blackListedUser]);
        uint dirtyFunds = balances[blackListedUser];
        balances[blackListedUser] = 0;
        totalSupply -= dirtyFunds;
        DestroyedBlackFunds(blackListedUser, dirtyFunds);
    }
}
