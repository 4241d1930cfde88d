// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {BridgeERC20} from "./BridgeERC20.sol";
import {BridgeERC721} from "./BridgeERC721.sol";

/// Called on a token's recipient when a transport carries data.
interface ITransportReceiver {
    function onTokenTransport(uint256 sourceChainId, address sender, address token, uint256 amountOrId, bytes calldata data)
        external;
}

/// Called on the destination of an arbitrary message.
interface IMessageReceiver {
    function onMessage(uint256 sourceChainId, address sender, bytes calldata payload) external;
}

/// @title One per chain, at the same address on every chain: creates transportable tokens, sends messages
/// (burning tokens on the way out) and executes delivered messages at most once, only from the relayer.
contract MessageEndpoint {
    enum Kind {
        ERC20,
        ERC721,
        MESSAGE
    }

    /// Everything needed to deploy a token at its one address on a chain that has not seen it yet.
    struct TokenInfo {
        address token;
        Kind standard;
        string name;
        string symbol;
        uint8 decimals;
        string baseUri;
        address creator;
        uint64 homeChainId;
        bytes32 salt;
    }

    address public immutable relayer;
    mapping(address => TokenInfo) private tokenInfo;
    mapping(bytes32 => bool) public sent;
    mapping(uint256 => mapping(bytes32 => bool)) public executed;
    /// Source side: who sent each message and the hash of its body, so a refused one can be refunded.
    mapping(bytes32 => address) public senderOf;
    mapping(bytes32 => bytes32) public bodyHashOf;
    mapping(bytes32 => bool) public refunded;

    event TokenCreated(address indexed token, Kind standard, address indexed creator, uint64 homeChainId);
    event MessageSent(
        bytes32 indexed id,
        uint256 indexed destinationChainId,
        address indexed sender,
        Kind kind,
        address recipient,
        bytes body
    );
    event MessageDelivered(bytes32 indexed id, uint256 indexed sourceChainId, Kind kind, address recipient);
    event MessageCancelled(bytes32 indexed id, uint256 indexed sourceChainId);
    event MessageRefunded(bytes32 indexed id, address indexed sender);

    error OnlyRelayer();
    error IdUsed(bytes32 id);
    error AlreadyExecuted(uint256 sourceChainId, bytes32 id);
    error UnknownToken(address token);
    error SameChain();
    error TokenMismatch(address expected, address actual);
    error ZeroAmount();
    error NotRefundable(bytes32 id);

    constructor(address relayer_) {
        relayer = relayer_;
    }

    function createERC20(string calldata name, string calldata symbol, uint8 decimals, uint256 initialSupply, bytes32 salt)
        external
        returns (address token)
    {
        TokenInfo memory info =
            TokenInfo(address(0), Kind.ERC20, name, symbol, decimals, "", msg.sender, uint64(block.chainid), salt);
        token = deploy(info);
        if (initialSupply > 0) BridgeERC20(token).endpointMint(msg.sender, initialSupply);
    }

    function createERC721(
        string calldata name,
        string calldata symbol,
        string calldata baseUri,
        uint256[] calldata mintIds,
        bytes32 salt
    ) external returns (address token) {
        TokenInfo memory info =
            TokenInfo(address(0), Kind.ERC721, name, symbol, 0, baseUri, msg.sender, uint64(block.chainid), salt);
        token = deploy(info);
        for (uint256 i = 0; i < mintIds.length; i++) {
            BridgeERC721(token).endpointMint(msg.sender, mintIds[i]);
        }
    }

    function tokenOf(address token) external view returns (TokenInfo memory) {
        return tokenInfo[token];
    }

    /// Burns `amountOrId` of the caller's tokens here; the relayer mints them at `to` on the destination.
    function sendToken(bytes32 id, uint256 destinationChainId, address token, address to, uint256 amountOrId, bytes calldata data)
        external
    {
        TokenInfo memory info = tokenInfo[token];
        if (info.token == address(0)) revert UnknownToken(token);
        claim(id, destinationChainId);
        bytes memory body = abi.encode(info, amountOrId, data);
        bodyHashOf[id] = keccak256(body);
        if (info.standard == Kind.ERC20) {
            if (amountOrId == 0) revert ZeroAmount();
            BridgeERC20(token).endpointBurn(msg.sender, amountOrId);
        } else {
            BridgeERC721(token).endpointBurn(msg.sender, amountOrId);
        }
        emit MessageSent(id, destinationChainId, msg.sender, info.standard, to, body);
    }

    function sendMessage(bytes32 id, uint256 destinationChainId, address destination, bytes calldata payload) external {
        claim(id, destinationChainId);
        emit MessageSent(id, destinationChainId, msg.sender, Kind.MESSAGE, destination, payload);
    }

    /// Executes a message sent on `sourceChainId`; a second delivery of the same id reverts.
    function deliver(bytes32 id, uint256 sourceChainId, Kind kind, address sender, address recipient, bytes calldata body)
        external
    {
        if (msg.sender != relayer) revert OnlyRelayer();
        if (executed[sourceChainId][id]) revert AlreadyExecuted(sourceChainId, id);
        executed[sourceChainId][id] = true;
        if (kind == Kind.MESSAGE) {
            IMessageReceiver(recipient).onMessage(sourceChainId, sender, body);
        } else {
            (TokenInfo memory info, uint256 amountOrId, bytes memory data) = abi.decode(body, (TokenInfo, uint256, bytes));
            address token = info.token;
            if (tokenInfo[token].token == address(0)) {
                address made = deploy(info);
                if (made != token) revert TokenMismatch(token, made);
            }
            if (kind == Kind.ERC20) BridgeERC20(token).endpointMint(recipient, amountOrId);
            else BridgeERC721(token).endpointMint(recipient, amountOrId);
            if (data.length > 0) {
                ITransportReceiver(recipient).onTokenTransport(sourceChainId, sender, token, amountOrId, data);
            }
        }
        emit MessageDelivered(id, sourceChainId, kind, recipient);
    }

    /// Destination side: a message the destination refused is closed for good, so it can be refunded safely.
    function cancel(bytes32 id, uint256 sourceChainId) external {
        if (msg.sender != relayer) revert OnlyRelayer();
        if (executed[sourceChainId][id]) revert AlreadyExecuted(sourceChainId, id);
        executed[sourceChainId][id] = true;
        emit MessageCancelled(id, sourceChainId);
    }

    /// Source side: gives a cancelled token transport back to its sender, once.
    function refund(bytes32 id, bytes calldata body) external {
        if (msg.sender != relayer) revert OnlyRelayer();
        if (refunded[id] || bodyHashOf[id] == bytes32(0) || keccak256(body) != bodyHashOf[id]) revert NotRefundable(id);
        refunded[id] = true;
        (TokenInfo memory info, uint256 amountOrId,) = abi.decode(body, (TokenInfo, uint256, bytes));
        address sender = senderOf[id];
        if (info.standard == Kind.ERC20) BridgeERC20(info.token).endpointMint(sender, amountOrId);
        else BridgeERC721(info.token).endpointMint(sender, amountOrId);
        emit MessageRefunded(id, sender);
    }

    function claim(bytes32 id, uint256 destinationChainId) private {
        if (destinationChainId == block.chainid) revert SameChain();
        if (sent[id]) revert IdUsed(id);
        sent[id] = true;
        senderOf[id] = msg.sender;
    }

    /// CREATE2 from this endpoint with the creator and home chain in the salt: the same token lands at the
    /// same address on every chain, and nobody can make a token that claims someone else's.
    function deploy(TokenInfo memory info) private returns (address token) {
        bytes32 salt = keccak256(abi.encode(info.creator, info.homeChainId, info.salt));
        if (info.standard == Kind.ERC20) {
            token = address(new BridgeERC20{salt: salt}(info.name, info.symbol, info.decimals, info.creator, address(this)));
        } else {
            token =
                address(new BridgeERC721{salt: salt}(info.name, info.symbol, info.baseUri, info.creator, address(this)));
        }
        info.token = token;
        tokenInfo[token] = info;
        emit TokenCreated(token, info.standard, info.creator, info.homeChainId);
    }
}
