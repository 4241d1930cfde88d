/** Password attempts counted apart from a wallet's own: an admin opening another tenant's wallet. */
export const up = `
create table attempt_limits (
  -- "<admin key id>:<wallet id>": each admin has its own allowance on each wallet.
  scope text primary key, failed_attempts integer not null, locked_until bigint not null
);
`;

export const down = `
drop table attempt_limits;
`;
