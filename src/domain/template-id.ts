import { Type } from '@sinclair/typebox';

/**
 * What a submitted message is stored as in history (`template_id`), lead's decision L5: template
 * ids never start with `@`. A module of its own, without imports of the send path, so the HTTP
 * and webhook schemas can describe it.
 */
export const SUBMITTED_TEMPLATE_ID = '@smtp';

/** `template_id` in every schema that shows a message (history, message, test inbox, webhook payloads). */
const SUBMITTED_NOTE = `'${SUBMITTED_TEMPLATE_ID}' for a message submitted over SMTP and sent as submitted (no template)`;
export const TemplateIdSchema = Type.String({ description: `The template's id; ${SUBMITTED_NOTE}` });
