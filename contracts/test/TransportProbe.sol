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

    error ProbeRefused(uint256 code);

    /// A one-byte payload 0xE1, 0xE2 or 0xE3 is refused with Error(string), a panic or a custom error:
    /// tests and demos of refused deliveries use them.
    function onMessage(uint256 sourceChainId, address sender, bytes calldata payload) external {
        if (payload.length == 1) {
            if (payload[0] == 0xE1) revert("probe refuses this payload");
            if (payload[0] == 0xE2) messages = messages / (payload.length - 1);
            if (payload[0] == 0xE3) revert ProbeRefused(7);
        }
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
