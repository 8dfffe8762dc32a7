/**
 * The CLI's help: one entry per command, so `mailroom --help` lists them all and each
 * `mailroom COMMAND --help` shows its own usage from the same text.
 */
export interface CommandHelp {
  /** The words that name it: `serve`, `keys rotate`. */
  name: string;
  usage: string;
  /** One line for the list. */
  summary: string;
  /** More lines for the command's own --help. */
  details?: string;
}

export const COMMANDS: readonly CommandHelp[] = [
  {
    name: 'serve',
    usage: 'mailroom serve',
    summary: 'start the HTTP API and a delivery worker (applies MAILROOM_CONFIG first)',
    details:
      'On a fresh database with no MAILROOM_CONFIG it creates a demo organization and prints its keys.\n' +
      'MAILROOM_WORKER=off starts the API alone (run `mailroom worker` processes beside it).',
  },
  {
    name: 'worker',
    usage: 'mailroom worker [--metrics-port N]',
    summary: 'run a delivery worker only (no HTTP API)',
    details: "--metrics-port N (or MAILROOM_METRICS_PORT) serves this worker's /metrics and /v1/health on port N.",
  },
  { name: 'migrate', usage: 'mailroom migrate', summary: 'apply pending database migrations (serve and worker do it too)' },
  {
    name: 'apply',
    usage: 'mailroom apply FILE',
    summary: 'apply a declarative YAML config: creates what is missing, changes what differs',
    details: 'Never deletes what the file does not name; a second run changes nothing. See examples/mailroom.yaml.',
  },
  {
    name: 'keys list',
    usage: 'mailroom keys list ORG',
    summary: "list an organization's keys: id, type, mode (live|test), status, hint, expiry",
    details: 'A send_only key shows `send_only` after its hint, and a named key its name in quotes.',
  },
  {
    name: 'keys create',
    usage: 'mailroom keys create ORG public|private [--test] [--name NAME] [--scope full|send_only]',
    summary:
      'create a key and print its value (shown this once); --test: a test key (pk_test_/sk_test_, nothing it sends leaves)',
    details:
      '--name: a label (1-100 characters) shown in lists and the UI.\n' +
      '--scope send_only (private keys): the key sends but cannot read history, messages, templates or the test inbox.',
  },
  {
    name: 'keys rotate',
    usage: 'mailroom keys rotate ORG KEY_ID [--grace-seconds N]',
    summary: 'replace a key with a new one; the old one stops at once, or after N seconds',
    details:
      "Prints the new key's id and value. With --grace-seconds N (up to 2592000, 30 days) the old key keeps\n" +
      'working beside the new one for N seconds, so clients can move over without refused requests.\n' +
      '`mailroom keys revoke ORG OLD_KEY_ID` ends the grace period at once.',
  },
  {
    name: 'keys rename',
    usage: 'mailroom keys rename ORG KEY_ID NAME',
    summary: 'rename a key (the label shown in lists and the UI); its value and scope stay as they are',
    details:
      'NAME: 1-100 characters, no tabs or line breaks; quote a name with spaces. Prints the key as `keys list` shows it.\n' +
      'The admin API does the same: PATCH /admin/v1/organizations/ORG/keys/KEY_ID {"name": "…"} (null clears it).',
  },
  {
    name: 'keys revoke',
    usage: 'mailroom keys revoke ORG KEY_ID',
    summary: "revoke a key at once (also ends a rotation's grace period)",
  },
  {
    name: 'credits show',
    usage: 'mailroom credits show ORG',
    summary: 'show the credit balance, overdraft, out-of-credit mode and held messages',
  },
  {
    name: 'credits add',
    usage: 'mailroom credits add ORG AMOUNT',
    summary: 'add credits; held messages are released, oldest first',
  },
  {
    name: 'services test',
    usage: 'mailroom services test ORG ID [--to ADDRESS]',
    summary: "check a service's credentials without sending (SMTP: connect, TLS, AUTH; an API: one read-only call)",
    details:
      'With --to, one real message ("mailroom service test", plain text, from the service\'s from_email) goes to ADDRESS\n' +
      "and the provider's answer is printed. Exit status 3 when the provider fails the test: the reason (auth, tls, connect,\n" +
      'timeout, unverified_sender, other) and its message are printed.',
  },
  {
    name: 'webhooks list',
    usage: 'mailroom webhooks list ORG',
    summary: "list an organization's webhook endpoints: id, state, events, URL",
  },
  {
    name: 'webhooks add',
    usage: 'mailroom webhooks add ORG URL [--events a,b] [--id ID] [--description TEXT] [--header "Name: value"]…',
    summary: 'register a webhook endpoint and print its signing secret (shown this once)',
    details:
      '--events: comma-separated event types (message.delivered,message.bounced, …); left out: every event.\n' +
      '--id: 1..64 of a-z 0-9 _ - (default: a generated wh_…). In production the URL must be https to a public address.\n' +
      '--header: a header sent with every request (repeatable, at most 10), e.g. --header "Authorization: Basic …"; ' +
      'its value is never shown again.',
  },
  {
    name: 'webhooks remove',
    usage: 'mailroom webhooks remove ORG ID',
    summary: 'delete a webhook endpoint and its delivery log',
  },
  {
    name: 'webhooks enable',
    usage: 'mailroom webhooks enable ORG ID',
    summary: 're-enable an endpoint (after 410 Gone or days of failures)',
  },
  {
    name: 'webhooks disable',
    usage: 'mailroom webhooks disable ORG ID',
    summary: 'stop sending to an endpoint (new events skip it; replay-range sends them later)',
  },
  {
    name: 'webhooks rotate-secret',
    usage: 'mailroom webhooks rotate-secret ORG ID [--grace-seconds N]',
    summary: 'give an endpoint a new signing secret; the old one signs too for 24 h (or N seconds)',
    details: 'Prints the new secret (shown this once). --grace-seconds 0 stops the old secret now.',
  },
  {
    name: 'webhooks test',
    usage: 'mailroom webhooks test ORG ID',
    summary: 'send a signed webhook.test event now and print what the receiver answered',
  },
  {
    name: 'webhooks deliveries',
    usage:
      'mailroom webhooks deliveries ORG ID [--state ' +
      'pending|succeeded|failed] [--event-type TYPE] [--message MESSAGE_ID] [--limit N]',
    summary: "show an endpoint's delivery log, newest first",
    details:
      "--event-type: one event type (message.delivered, …); --message: one message's deliveries. `mailroom webhooks " +
      'delivery` shows one with its attempts.',
  },
  {
    name: 'webhooks delivery',
    usage: 'mailroom webhooks delivery ORG DELIVERY_ID',
    summary: 'show one delivery with each attempt: time, HTTP status, duration, error, the start of the answer',
  },
  {
    name: 'webhooks replay',
    usage: 'mailroom webhooks replay ORG DELIVERY_ID',
    summary: 'send one delivery again (same webhook-id and body)',
    details:
      'A delivery being sent at this moment is left to finish (exit 2, nothing changed). To a disabled endpoint it is queued\n' +
      'and waits until `mailroom webhooks enable ORG ID`.',
  },
  {
    name: 'webhooks replay-range',
    usage: 'mailroom webhooks replay-range ORG ID --since ISO --until ISO [--only-failed]',
    summary: 'send again every event of a time range to an endpoint (or only the failed deliveries)',
    details:
      'The range spans at most 31 days and covers events of messages created at most 7 days before --since.\n' +
      "Deliveries it creates carry the message's current status.",
  },
  {
    name: 'help',
    usage: 'mailroom help [COMMAND]',
    summary: "list the commands, or show one command's usage (also: COMMAND --help)",
  },
];

const FOOTER = `From a checkout: \`npx mailroom COMMAND\` there, or \`npm link\` once, then \`mailroom COMMAND\` anywhere.
Configuration comes from MAILROOM_* environment variables; see README.md.
Exit status: 0 done, 1 usage error, 2 configuration error or an organization or key that does not exist,
3 a service test the provider failed.`;

/** The full list: every command with its one-line description. */
export function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`);
  return (
    `mailroom: self-hosted transactional email API\n\nUsage: ` +
    `mailroom COMMAND [ARGS]\n\nCommands:\n${lines.join('\n')}\n\n${FOOTER}`
  );
}

/**
 * Help for the words given (`keys`, `keys rotate`): the matching command's usage and details,
 * or every subcommand of a group; undefined when nothing matches.
 */
export function commandHelp(words: readonly string[]): string | undefined {
  const asked = words.join(' ');
  const exact = COMMANDS.find((c) => c.name === asked);
  if (exact !== undefined)
    return [`Usage: ${exact.usage}`, '', exact.summary, ...(exact.details === undefined ? [] : ['', exact.details])].join('\n');
  const group = words[0] === undefined ? [] : COMMANDS.filter((c) => c.name.split(' ')[0] === words[0]);
  if (group.length === 0) return undefined;
  return `Usage:\n${group.map((c) => `  ${c.usage}\n      ${c.summary}`).join('\n')}`;
}

/** The usage lines of a command group (`keys`) or of one command (`keys rename`), for wrong arguments. */
export function usageOf(group: string): string {
  return `Usage:\n${COMMANDS.filter((c) => c.name === group || c.name.split(' ')[0] === group)
    .map((c) => `  ${c.usage}`)
    .join('\n')}`;
}
