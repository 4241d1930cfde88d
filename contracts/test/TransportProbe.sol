// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title A receiver for tests and demos: counts every message and token callback it is given.
contract TransportProbe {
    uint256 public messages;
    uint256 public tokenCallbacks;
    bytes public lastPayload;
    uint256 public lastSourceChainId;
    address public lastSender;
    address public lastToken;
    uint256 public lastAmountOrId;

    event MessageReceived(uint256 sourceChainId, address sender, bytes payload);
    event TokensReceived(uint256 sourceChainId, address sender, address token, uint256 amountOrId, bytes data);

    function onMessage(uint256 sourceChainId, address sender, bytes calldata payload) external {
        messages += 1;
        lastPayload = payload;
        lastSourceChainId = sourceChainId;
        lastSender = sender;
        emit MessageReceived(sourceChainId, sender, payload);
    }

    function onTokenTransport(uint256 sourceChainId, address sender, address token, uint256 amountOrId, bytes calldata data)
        external
    {
        tokenCallbacks += 1;
        lastPayload = data;
        lastSourceChainId = sourceChainId;
        lastSender = sender;
        lastToken = token;
        lastAmountOrId = amountOrId;
        emit TokensReceived(sourceChainId, sender, token, amountOrId, data);
    }
}
