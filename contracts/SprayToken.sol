// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title SprayToken
/// @notice ERC-20 core shared by the devchain tokens: balances, allowances, owner-only mint,
/// burn, and `spray`, a bulk generator of real transfers for tests and benchmarks.
/// @dev Name and symbol live in the concrete tokens because their ABI type differs
/// (string for DemoToken, bytes32 for Bytes32Token).
abstract contract SprayToken {
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error InsufficientBalance(address from, uint256 balance, uint256 needed);
    error InsufficientAllowance(address owner, address spender, uint256 allowance, uint256 needed);
    error NotMinter(address caller);
    error TooFewHolders(uint256 holders);
    error ZeroAddress();
    error CapExceeded(uint256 cap, uint256 supplyAfter);

    uint8 public immutable decimals;
    /// @dev 10**decimals: spray amounts are expressed in whole tokens so they read well in the demo.
    uint256 private immutable _unit;
    address private immutable _minter;
    /// @dev Maximum total supply, 0 for none. Only CappedDemoToken exposes it, as `cap()`.
    uint256 internal immutable _maxSupply;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    uint256 private constant SPRAY_WINDOW = 4096;

    /// @notice Number of transfers `spray` has emitted so far; lets a caller check that a batch ran in full
    /// without downloading receipts that carry thousands of logs.
    uint256 public sprayed;
    /// @dev Advances on every `spray` call so consecutive batches with one seed draw different pairs.
    uint256 private _sprayNonce;

    constructor(uint8 decimals_, uint256 initialSupply, uint256 maxSupply) {
        decimals = decimals_;
        _unit = 10 ** uint256(decimals_);
        _minter = msg.sender;
        _maxSupply = maxSupply;
        _mint(msg.sender, initialSupply);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < amount) revert InsufficientAllowance(from, msg.sender, allowed, amount);
            unchecked {
                allowance[from][msg.sender] = allowed - amount;
            }
        }
        _transfer(from, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    /// @notice Creates `amount` for `to` (Transfer from 0x0). Only the deployer may mint.
    function mint(address to, uint256 amount) external {
        if (msg.sender != _minter) revert NotMinter(msg.sender);
        _mint(to, amount);
    }

    /// @notice Destroys `amount` of the caller's balance (Transfer to 0x0).
    function burn(uint256 amount) external {
        uint256 balance = balanceOf[msg.sender];
        if (balance < amount) revert InsufficientBalance(msg.sender, balance, amount);
        unchecked {
            balanceOf[msg.sender] = balance - amount;
            totalSupply -= amount;
        }
        emit Transfer(msg.sender, address(0), amount);
    }

    /// @notice The address of spray holder `index` for `seed`: the low 160 bits of keccak256(seed, index).
    function sprayHolder(uint256 seed, uint256 index) external pure returns (address) {
        return _holder(seed, index);
    }

    /// @notice Performs exactly `count` ERC-20 transfers among `holders` addresses derived from `seed`.
    /// A call uses a window of up to 4096 consecutive holder indexes; the next call on this token uses
    /// the next window, so spraying at least `holders` transfers in batches reaches every holder. Each step moves 0.001 to 100 tokens between two distinct holders; when the chosen sender
    /// holds too little, the step instead funds it with 1000 tokens from msg.sender. Every step is a
    /// real balance move with its own Transfer event, so balances always equal what the events imply.
    /// @dev Kept lean for benchmarks: hashing uses scratch memory (no allocation per step) and
    /// arithmetic that cannot overflow (balances are bounded by totalSupply) is unchecked.
    function spray(uint256 count, uint256 holders, uint256 seed) external {
        if (holders < 2) revert TooFewHolders(holders);
        uint256 unit = _unit;
        uint256 fund = unit * 1000;
        uint256 nonce = _sprayNonce;
        // Each call draws its pairs from a window of at most SPRAY_WINDOW consecutive holders, and
        // consecutive calls move the window along, so every holder is reached once the calls have
        // covered `holders` in total. Within a call the window's storage slots become warm, which
        // roughly halves the gas (and anvil's time) per transfer when there are many holders.
        uint256 window = holders < SPRAY_WINDOW ? holders : SPRAY_WINDOW;
        uint256 start = (nonce * SPRAY_WINDOW) % holders;
        uint256 state;
        assembly {
            mstore(0x00, seed)
            mstore(0x20, nonce)
            state := keccak256(0x00, 0x40)
        }
        for (uint256 i; i < count; ) {
            assembly {
                mstore(0x00, state)
                state := keccak256(0x00, 0x20)
            }
            // Sender and a distinct receiver (offset 1..window-1) inside this call's window.
            uint256 a = (state & 0xffffffff) % window;
            uint256 b = (a + 1 + ((state >> 32) & 0xffffffff) % (window - 1)) % window;
            a = (start + a) % holders;
            b = (start + b) % holders;
            uint256 amount = (unit * (((state >> 64) % 100_000) + 1)) / 1000;
            if (amount == 0) amount = 1;
            address from = _holder(seed, a);
            uint256 fromBalance = balanceOf[from];
            if (fromBalance < amount) {
                _transfer(msg.sender, from, fund);
            } else {
                address to = _holder(seed, b);
                unchecked {
                    balanceOf[from] = fromBalance - amount;
                    balanceOf[to] += amount;
                }
                emit Transfer(from, to, amount);
            }
            unchecked {
                ++i;
            }
        }
        unchecked {
            _sprayNonce = nonce + 1;
            sprayed += count;
        }
    }

    function _transfer(address from, address to, uint256 amount) internal {
        if (to == address(0)) revert ZeroAddress();
        uint256 balance = balanceOf[from];
        if (balance < amount) revert InsufficientBalance(from, balance, amount);
        unchecked {
            balanceOf[from] = balance - amount;
            balanceOf[to] += amount;
        }
        emit Transfer(from, to, amount);
    }

    function _mint(address to, uint256 amount) internal {
        if (to == address(0)) revert ZeroAddress();
        uint256 supplyAfter = totalSupply + amount;
        if (_maxSupply != 0 && supplyAfter > _maxSupply) revert CapExceeded(_maxSupply, supplyAfter);
        totalSupply = supplyAfter;
        unchecked {
            balanceOf[to] += amount;
        }
        emit Transfer(address(0), to, amount);
    }

    function _holder(uint256 seed, uint256 index) private pure returns (address holder) {
        assembly {
            mstore(0x00, seed)
            mstore(0x20, index)
            holder := and(keccak256(0x00, 0x40), 0xffffffffffffffffffffffffffffffffffffffff)
        }
    }
}
