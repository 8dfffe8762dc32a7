import type { Generated } from 'kysely';

// The tables of test mode (migration 0015, issue 27); schema.ts lists them in Database.

/** A test message as its recipients would get it (migration 0015): the composed MIME is the blob. */
export interface TestInboxTable {
  message_id: string;
  org_id: string;
  template_id: string;
  subject: string | null;
  from_addr: string;
  /** JSON `[{kind: 'to' | 'cc' | 'bcc', address}]`. */
  recipients: string;
  /** Lower-cased subject, from and every address, one space apart: what `q` searches. */
  search: string;
  /** `${org_id}/eml_${message_id}` in the blob store. */
  blob_key: string;
  size: number;
  sha256: string;
  /** The message's created_at: paging and retention go by it. */
  created_at: number;
  captured_at: number;
}

/** A simulator event waiting for its time (migration 0015), once per `message:recipient:type`. */
export interface SimulatorEventsTable {
  id: Generated<number>;
  message_id: string;
  org_id: string;
  recipient: string;
  /** delivered | bounced | complained */
  type: string;
  bounce_type: string | null;
  status: string | null;
  reason: string | null;
  due_at: number;
  event_key: string;
}
