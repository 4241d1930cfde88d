// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title An ERC721 that exists at one address on every chain; only the message endpoint mints and burns.
contract BridgeERC721 is ERC721, Ownable {
    address public immutable endpoint;
    string private baseUri;

    error OnlyEndpoint();
    error NotTokenOwner(address from, uint256 tokenId);

    constructor(string memory name_, string memory symbol_, string memory baseUri_, address creator, address endpoint_)
        ERC721(name_, symbol_)
        Ownable(creator)
    {
        baseUri = baseUri_;
        endpoint = endpoint_;
    }

    modifier onlyEndpoint() {
        if (msg.sender != endpoint) revert OnlyEndpoint();
        _;
    }

    function baseURI() external view returns (string memory) {
        return baseUri;
    }

    function _baseURI() internal view override returns (string memory) {
        return baseUri;
    }

    function endpointMint(address to, uint256 tokenId) external onlyEndpoint {
        _mint(to, tokenId);
    }

    /// Burns only what `from` owns: the endpoint passes the account that asked to transport it.
    function endpointBurn(address from, uint256 tokenId) external onlyEndpoint {
        if (_ownerOf(tokenId) != from) revert NotTokenOwner(from, tokenId);
        _burn(tokenId);
    }
}
