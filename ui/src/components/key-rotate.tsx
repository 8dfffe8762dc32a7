import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { keysApi, type ApiKey, type IssuedKey } from '../api/keys';
import { formatTime } from '../lib/format';
import { convertGrace, type GraceUnit, MAX_GRACE_SECONDS, UNIT_SECONDS } from '../lib/key-grace';
import { ErrorNotice, Field, Notice, Section, Select } from './ui';

type Unit = GraceUnit;
const UNITS: ReadonlyArray<readonly [Unit, string]> = [
  ['hours', 'hours'],
  ['days', 'days'],
];
/** How often the "stops working at" time moves on while the form stays open (it shows minutes). */
const CLOCK_TICK_MS = 30_000;

/** `2026-11-30 11:40 UTC`: to the minute, since the server's clock when Rotate is pressed decides the second. */
const stopTime = (ms: number) => formatTime(new Date(ms).toISOString()).replace(/:\d\d UTC$/, ' UTC');

/**
 * Rotating one key: a grace period during which the old key keeps working, then the new key.
 * The grace starts at 24 hours (issue 29): at 0 seconds, "Rotate, Rotate" cut off at once every
 * server still using the old key. The form says when the old key stops, takes focus when it
 * opens, and Escape (or Cancel) closes it, giving focus back to the button that opened it.
 */
export function KeyRotateForm(props: { org: string; apiKey: ApiKey; onRotated: (k: IssuedKey) => void; onCancel: () => void }) {
  const [amount, setAmount] = useState('24');
  const [unit, setUnit] = useState<Unit>('hours');
  const [now, setNow] = useState(() => Date.now());
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const opener = useRef<Element | null>(null);
  const id = props.apiKey.id;
  // Again for another key's Rotate: the page keeps this form and passes the new key.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `id` is the trigger, not a value read.
  useEffect(() => {
    opener.current = document.activeElement;
    form.current?.querySelector('input')?.focus();
  }, [id]);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), CLOCK_TICK_MS);
    return () => clearInterval(timer);
  }, []);
  const seconds = Number(amount) * UNIT_SECONDS[unit];
  const max = MAX_GRACE_SECONDS / UNIT_SECONDS[unit];
  const invalid = !/^\d+$/.test(amount.trim()) || seconds > MAX_GRACE_SECONDS ? `a whole number, 0 to ${max} ${unit}` : undefined;
  const stops =
    invalid !== undefined
      ? undefined
      : seconds === 0
        ? 'The old key stops working at once.'
        : `The old key stops working at ${stopTime(now + seconds * 1000)}, ` +
          `${Number(amount)} ${Number(amount) === 1 ? unit.slice(0, -1) : unit} after you press Rotate.`;
  const cancel = () => {
    const back = opener.current;
    props.onCancel();
    if (back instanceof HTMLElement && back.isConnected) back.focus();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (invalid !== undefined) return;
    setBusy(true);
    setError(undefined);
    try {
      props.onRotated(await keysApi.rotate(props.org, id, seconds));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const serverField = error instanceof ApiFailure ? error.fieldIssues().grace_seconds : undefined;
  return (
    <Section title={`Rotate key ${id}`}>
      <form
        ref={form}
        onSubmit={submit}
        aria-label={`Rotate key ${id}`}
        onKeyDown={(e) => {
          if (e.key !== 'Escape') return;
          e.preventDefault();
          cancel();
        }}
      >
        <p>A new {props.apiKey.type} key replaces this one. During the grace period both keys work.</p>
        <div class="grace-period">
          <Field
            label="Grace period"
            type="number"
            min={0}
            max={max}
            inputMode="numeric"
            value={amount}
            onValue={setAmount}
            error={invalid ?? serverField}
            hint="0 stops the old key at once."
          />
          <Select
            label="Grace period unit"
            value={unit}
            options={UNITS}
            onValue={(v) => {
              // The period stays the same: 24 hours become 1 day, not 24 days.
              const next: Unit = v === 'days' ? 'days' : 'hours';
              setAmount(convertGrace(amount, unit, next));
              setUnit(next);
            }}
          />
        </div>
        {/* No grace cuts off every server still using the old key: a warning, not the plain safe-case line. */}
        {stops !== undefined &&
          (seconds === 0 ? (
            <Notice kind="error">
              <strong>{stops}</strong> Every request still made with it fails from the moment you press Rotate.
            </Notice>
          ) : (
            <p class="grace-stops">
              <strong>{stops}</strong>
            </p>
          ))}
        {serverField === undefined && <ErrorNotice error={error} />}
        <div class="org-form-actions">
          <button class="btn btn-primary" type="submit" disabled={busy || invalid !== undefined}>
            Rotate
          </button>
          <button class="btn btn-plain" type="button" onClick={cancel}>
            Cancel
          </button>
        </div>
      </form>
    </Section>
  );
}
