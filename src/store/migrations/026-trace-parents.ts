/** The W3C traceparent a transaction and a webhook event were made under, so any instance continues their trace. */
export const up = `
alter table transactions add column trace_parent text;
alter table webhook_events add column trace_parent text;
`;

export const down = `alter table webhook_events drop column trace_parent; alter table transactions drop column trace_parent;`;
