// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title An ERC20 that exists at one address on every chain; only the message endpoint mints and burns.
contract BridgeERC20 is ERC20, Ownable {
    address public immutable endpoint;
    uint8 private immutable decimals_;

    error OnlyEndpoint();

    constructor(string memory name_, string memory symbol_, uint8 tokenDecimals, address creator, address endpoint_)
        ERC20(name_, symbol_)
        Ownable(creator)
    {
        decimals_ = tokenDecimals;
        endpoint = endpoint_;
    }

    modifier onlyEndpoint() {
        if (msg.sender != endpoint) revert OnlyEndpoint();
        _;
    }

    function decimals() public view override returns (uint8) {
        return decimals_;
    }

    function endpointMint(address to, uint256 amount) external onlyEndpoint {
        _mint(to, amount);
    }

    function endpointBurn(address from, uint256 amount) external onlyEndpoint {
        _burn(from, amount);
    }
}
