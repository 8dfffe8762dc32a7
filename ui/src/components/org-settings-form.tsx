import { OUT_OF_CREDIT_MODES, PLANS } from '../api/organizations';
import { IdField, type TakenId } from './id-field';
import type { OrgForm } from './org-form';
import { Checkbox, Field, Section, Select, useId } from './ui';

/** The organization's `credits` setting as the form offers it (issue 29). */
const CREDIT_CHOICES: ReadonlyArray<readonly [string, string]> = [
  ['unlimited', 'Unlimited: not metered'],
  ['metered', 'Metered: a credit per message'],
];

type Set = <K extends keyof OrgForm>(key: K, value: OrgForm[K]) => void;

/** A labelled textarea for a list setting (one entry per line). */
export function ListField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  hint: string;
  error?: string | undefined;
}) {
  const id = useId('l');
  return (
    <div class={`field${props.error !== undefined ? ' has-error' : ''}`}>
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={3}
        value={props.value}
        onInput={(e) => props.onValue((e.target as HTMLTextAreaElement).value)}
        aria-describedby={`${id}-hint${props.error !== undefined ? ` ${id}-err` : ''}`}
        aria-invalid={props.error !== undefined ? 'true' : undefined}
      />
      <small id={`${id}-hint`} class="hint">
        {props.hint}
      </small>
      {props.error !== undefined && (
        <small id={`${id}-err`} class="field-error" role="alert">
          {props.error}
        </small>
      )}
    </div>
  );
}

/**
 * The settings the declarative file can set, grouped as the README describes them. `errors`
 * are keyed by the admin API's field names (`security.ip_limit.requests`); `taken` says the
 * typed id belongs to an existing organization.
 */
export function OrgSettingsFields(props: {
  form: OrgForm;
  set: Set;
  creating: boolean;
  errors: Record<string, string>;
  taken?: TakenId | undefined;
}) {
  const { form: f, set, errors: e } = props;
  return (
    <>
      <Section title="General">
        <div class="form-row">
          {props.creating && (
            <IdField
              label="Id"
              value={f.id}
              onValue={(v) => set('id', v)}
              error={e.id}
              taken={props.taken}
              required
              hint="Used in URLs and the API; cannot change later."
            />
          )}
          <Field label="Name" value={f.name} onValue={(v) => set('name', v)} error={e.name} hint="Left empty: the id." />
          <Select
            label="Plan"
            value={f.plan}
            options={PLANS.map((p) => [p, p] as const)}
            onValue={(v) => set('plan', v)}
            error={e.plan}
          />
        </div>
        <Checkbox label="Email verified" checked={f.email_verified} onChecked={(v) => set('email_verified', v)} />
        <Checkbox label="Suspended (every send refused)" checked={f.suspended} onChecked={(v) => set('suspended', v)} />
      </Section>
      <Section title="Credits and hold mode">
        <div class="form-row">
          <Select
            label="Credits"
            value={f.credit_mode}
            options={CREDIT_CHOICES}
            onValue={(v) => set('credit_mode', v)}
            error={e.credits}
          />
        </div>
        {f.credit_mode === 'unlimited' ? (
          <p class="hint">
            Sends take no credit and are never held or refused for one; messages held for credits are released when this is saved.
            Rate limits and attachment limits of the plan still apply.
          </p>
        ) : (
          <MeteredFields {...props} />
        )}
      </Section>
      <Section title="Security">
        <Checkbox
          label="Require a private key for every send"
          checked={f.require_private_key}
          onChecked={(v) => set('require_private_key', v)}
        />
        <Checkbox
          label="Allow private keys in browsers"
          checked={f.allow_private_keys_in_browsers}
          onChecked={(v) => set('allow_private_keys_in_browsers', v)}
        />
        <Checkbox label="Block headless browsers" checked={f.block_headless} onChecked={(v) => set('block_headless', v)} />
        <Checkbox label="Allow mobile apps" checked={f.allow_mobile_apps} onChecked={(v) => set('allow_mobile_apps', v)} />
        <div class="form-row">
          <Field
            label="IP limit: requests"
            type="number"
            min={1}
            value={f.ip_requests}
            onValue={(v) => set('ip_requests', v)}
            error={e['security.ip_limit.requests'] ?? e['security.ip_limit']}
          />
          <Field
            label="IP limit: per seconds"
            type="number"
            min={1}
            max={86400}
            value={f.ip_per_seconds}
            onValue={(v) => set('ip_per_seconds', v)}
            error={e['security.ip_limit.per_seconds']}
          />
          <Field
            label="Daily sends per recipient"
            type="number"
            min={1}
            value={f.recipient_daily_limit}
            onValue={(v) => set('recipient_daily_limit', v)}
            error={e['security.recipient_daily_limit']}
          />
          <Field
            label="Block list: watched parameter"
            value={f.watch_variable}
            onValue={(v) => set('watch_variable', v)}
            error={e['security.block_list.watch_variable']}
            hint="A template parameter also checked against the block list."
          />
        </div>
        <div class="form-row">
          <ListField
            label="Allowed origins"
            value={f.allowed_origins}
            onValue={(v) => set('allowed_origins', v)}
            hint="One per line: example.com or *.example.com."
            error={e['security.allowed_origins']}
          />
          <ListField
            label="Mobile app schemes"
            value={f.mobile_app_schemes}
            onValue={(v) => set('mobile_app_schemes', v)}
            hint="One per line, e.g. myapp."
            error={e['security.mobile_app_schemes']}
          />
          <ListField
            label="Link domains"
            value={f.link_domains}
            onValue={(v) => set('link_domains', v)}
            hint={
              'Domains links in templates may point to, one per line: example.com ' +
              'covers its subdomains (*.example.com means the same); no scheme, port or path.'
            }
            error={e['security.link_domains']}
          />
        </div>
      </Section>
      <Section title="CAPTCHA">
        <Checkbox label="Require a CAPTCHA on public-key sends" checked={f.captcha} onChecked={(v) => set('captcha', v)} />
        {f.captcha && (
          <div class="form-row">
            <Field
              label="Site key"
              value={f.captcha_site_key}
              onValue={(v) => set('captcha_site_key', v)}
              error={e['captcha.site_key']}
              autoComplete="off"
            />
            <Field
              label="Secret key"
              type="password"
              autoComplete="new-password"
              value={f.captcha_secret_key}
              onValue={(v) => set('captcha_secret_key', v)}
              error={e['captcha.secret_key']}
              placeholder={f.captcha_secret_stored ? 'unchanged (write-only)' : ''}
              hint={
                f.captcha_secret_stored
                  ? 'Stored and never shown. Type a new one to replace it.'
                  : 'Write-only: never shown again.'
              }
            />
          </div>
        )}
      </Section>
    </>
  );
}

/** What applies only while credits are metered (the spec's rules): hidden, and left as they are, while unlimited. */
function MeteredFields(props: { form: OrgForm; set: Set; creating: boolean; errors: Record<string, string> }) {
  const { form: f, set, errors: e } = props;
  return (
    <>
      <div class="form-row">
        {props.creating && (
          <Field
            label="Starting credits"
            type="number"
            min={0}
            value={f.credits}
            onValue={(v) => set('credits', v)}
            error={e.credits}
          />
        )}
        <Select
          label="When credits run out"
          value={f.when_out_of_credits}
          options={OUT_OF_CREDIT_MODES.map((m) => [m, m === 'hold' ? 'Hold messages' : 'Reject sends'] as const)}
          onValue={(v) => set('when_out_of_credits', v)}
          error={e.when_out_of_credits}
        />
        <Field
          label="Hold queue limit"
          type="number"
          min={0}
          value={f.hold_queue_limit}
          onValue={(v) => set('hold_queue_limit', v)}
          error={e.hold_queue_limit}
          hint="Most messages held at once."
        />
        <Field
          label="Overdraft"
          type="number"
          min={0}
          value={f.overdraft}
          onValue={(v) => set('overdraft', v)}
          error={e.overdraft}
          hint="How far below zero private-key sends may go."
        />
      </div>
      <Checkbox
        label="Public-key sends may use the overdraft too"
        checked={f.public_overdraft}
        onChecked={(v) => set('public_overdraft', v)}
      />
    </>
  );
}
