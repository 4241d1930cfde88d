/** A filter belongs to the tenant that installed it: only it may poll or uninstall it, and its count is capped. */
export const up = `
alter table filters add column owner text;
create index filters_owner on filters (owner);
`;

export const down = `
drop index filters_owner;
alter table filters drop column owner;
`;
