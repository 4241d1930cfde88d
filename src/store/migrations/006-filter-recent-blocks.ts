/** Filters remember the blocks they delivered lately, so a reorg can be undone with removed: true. */
export const up = `
alter table filters add column recent text;
`;

export const down = `
alter table filters drop column recent;
`;
