/** Which instance made an unlock: one made without a server key holds there only, and only while that instance lives. */
export const up = `
alter table unlocks add column instance_id text;
`;

export const down = `
alter table unlocks drop column instance_id;
`;
