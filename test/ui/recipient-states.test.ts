import { describe, expect, it } from 'vitest';
import { Message } from '../../src/http/routes/messages.js';
import { RECIPIENT_STATES, recipientState } from '../../ui/src/lib/recipient-states.js';

/** Every recipient state the API can answer (GET /v1/messages/{id}'s schema) has words on the message page (issue 29). */
function apiStates(): string[] {
  const recipients = Message.properties.recipients as unknown as {
    items: { properties: { state: { anyOf: Array<{ const: string }> } } };
  };
  return recipients.items.properties.state.anyOf.map((s) => s.const);
}

describe("a recipient's state in words", () => {
  it('names every state the API answers, each with what it means, and no other', () => {
    const states = apiStates();
    expect(states.length).toBeGreaterThan(5);
    expect(Object.keys(RECIPIENT_STATES).sort()).toEqual([...states].sort());
    for (const s of states) {
      expect(recipientState(s).label, s).not.toBe('');
      expect(recipientState(s).means, s).not.toBe('');
    }
    expect(recipientState('deferred').label).toBe('retrying');
    expect(recipientState('some_new_state')).toEqual({ label: 'some_new_state', means: '' });
  });
});
