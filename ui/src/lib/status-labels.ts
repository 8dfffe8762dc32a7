/**
 * Status words as an operator reads them: the API's values are identifiers (`held_service_error`),
 * shown as words wherever a status is (badges, the Messages filter). The raw value stays the
 * checkbox's value and the badge's tooltip, so it can still be matched with the API and the docs.
 */
export const STATUS_LABELS: Readonly<Record<string, string>> = {
  held_service_error: 'held: service error',
  half_open: 'half open',
};

/** The label of a status: its entry in STATUS_LABELS, else the value itself (already a word). */
export const statusLabel = (value: string): string => STATUS_LABELS[value] ?? value;
