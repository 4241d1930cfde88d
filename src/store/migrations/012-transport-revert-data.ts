/** The raw revert data of a refused delivery, kept beside the reason in words. */
export const up = `
alter table transports add column revert_data text;
`;

export const down = `
alter table transports drop column revert_data;
`;
