// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title The member registry on chaingate's home chain, written only by the operator key.
contract MemberRegistry is Ownable {
    enum Role {
        PARTICIPANT,
        ISSUER,
        AUDITOR
    }
    enum Status {
        ACTIVE,
        SUSPENDED
    }

    struct Member {
        uint64 id;
        string name;
        uint64 chainId;
        Role role;
        Status status;
        address owner;
        uint64 createdAt;
        uint64 updatedAt;
    }

    Member[] private members;
    /// keccak256(name) => id + 1 (0: free)
    mapping(bytes32 => uint256) private slotByName;

    event MemberRegistered(uint64 indexed id, string name, uint64 chainId, Role role, address owner);
    event MemberStatusChanged(uint64 indexed id, Status status);

    error NameTaken(string name);
    error EmptyName();
    error UnknownMember(uint64 id);

    constructor(address operator) Ownable(operator) {}

    function register(string calldata name, uint64 chainId, Role role, address memberOwner)
        external
        onlyOwner
        returns (uint64 id)
    {
        if (bytes(name).length == 0) revert EmptyName();
        bytes32 key = keccak256(bytes(name));
        if (slotByName[key] != 0) revert NameTaken(name);
        id = uint64(members.length + 1);
        members.push(
            Member(id, name, chainId, role, Status.ACTIVE, memberOwner, uint64(block.timestamp), uint64(block.timestamp))
        );
        slotByName[key] = id;
        emit MemberRegistered(id, name, chainId, role, memberOwner);
    }

    function setStatus(uint64 id, Status status) external onlyOwner {
        if (id == 0 || id > members.length) revert UnknownMember(id);
        Member storage member = members[id - 1];
        member.status = status;
        member.updatedAt = uint64(block.timestamp);
        emit MemberStatusChanged(id, status);
    }

    function idOf(string calldata name) external view returns (uint64) {
        return uint64(slotByName[keccak256(bytes(name))]);
    }

    function count() external view returns (uint256) {
        return members.length;
    }

    /// Members [offset, offset + limit), so a long registry can be read in pages.
    function page(uint256 offset, uint256 limit) external view returns (Member[] memory out) {
        uint256 end = offset + limit;
        if (end > members.length) end = members.length;
        if (offset >= end) return new Member[](0);
        out = new Member[](end - offset);
        for (uint256 i = offset; i < end; i++) {
            out[i - offset] = members[i];
        }
    }
}
