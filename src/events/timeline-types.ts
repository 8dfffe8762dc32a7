import type { TimelineEventType } from '../domain/timeline.js';
import type { ProviderEventType } from './types.js';

// The timeline's types live in the domain (src/domain/timeline.ts): storage's webhook outbox and
// the webhooks need them, and neither may import events (test/repo/layers.test.ts).
export { TIMELINE_EVENT_MEANINGS, TIMELINE_EVENT_TYPES, type TimelineEventType } from '../domain/timeline.js';

/** Compile-time: record writes a provider event's own type, so it must be a timeline type. */
type Holds<T extends true> = T;
export type ProviderTypesAreTimelineTypes = Holds<ProviderEventType extends TimelineEventType ? true : false>;
