import { openBenchContext, sendSettings } from './bench-context.js';
import { deliveryBench } from './delivery.js';
import { latencyGoal, printLatencyGoal } from './latency-goal.js';
import { machineLine } from './machine.js';
import { providerBench } from './provider.js';
import { printMemoryGoal, printSendGoal, sendGoal } from './send-goal.js';
import { printWalBench, walBench } from './wal-size.js';

/**
 * `npm run bench`: goals 1, 2 and 5 of issue 16 (send vs the durable baseline, latency under a
 * steady load, memory), then delivery through the queue to an SMTP sink and to a Postmark fake.
 * Then the SQLite WAL's size over BENCH_WAL_SECONDS (60) at the highest sustained rate.
 * BENCH_ONLY=send|latency|memory|delivery|provider|wal runs one part. Run time with the defaults,
 * build not included: 11 min 12 s measured on this 2-core machine while other processes kept its
 * load average at 8-24 (send + memory ~5 min, latency ~4 min, delivery and provider ~2 min); on a
 * quiet machine the parts add up to ~7 min. Profile the server with
 * BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" (passed to every `mailroom serve`).
 */
async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  const parts = ['send', 'latency', 'memory', 'delivery', 'provider', 'wal'];
  if (only !== undefined && !parts.includes(only)) throw new Error(`BENCH_ONLY must be one of ${parts.join(', ')}`);
  const settings = sendSettings();
  console.log(
    `mailroom bench (SQLite, \`mailroom serve\` in a child process, MAILROOM_LOG_LEVEL=${settings.logLevel}, 300 organizations)`,
  );
  console.log(machineLine());
  const wants = (part: string) => only === undefined || only === part;
  if (wants('send') || wants('latency') || wants('memory') || wants('wal')) {
    const ctx = await openBenchContext(settings);
    try {
      if (wants('send') || only === 'memory') {
        // Goal 5 reads the mailroom process of goal 1's runs; alone, it runs them without the baseline.
        const send = await sendGoal(ctx, only !== 'memory');
        if (only !== 'memory') printSendGoal(send, settings.seconds, settings.connections);
        printMemoryGoal(send.memory, settings.rounds);
      }
      if (wants('latency')) printLatencyGoal(await latencyGoal(ctx), settings.rate, settings.openSeconds);
      if (wants('wal')) printWalBench(await walBench(ctx, Number(process.env.BENCH_WAL_SECONDS ?? 60)), settings.connections);
    } finally {
      await ctx.close();
    }
  }
  if (wants('delivery')) {
    console.log('');
    const d = await deliveryBench(Number(process.env.BENCH_MESSAGES ?? 3000), Number(process.env.BENCH_ROUNDS ?? 5));
    console.log(`delivery, ${d.messages} messages to a loopback SMTP sink, ${d.ratios.length} alternating rounds (medians):`);
    console.log(
      `  raw nodemailer pool (50 in ` +
        `flight)  ${d.raw.toFixed(0).padStart(6)} msg/s   ${d.rawCpuMicros.toFixed(0).padStart(4)} µs CPU/msg`,
    );
    console.log(
      `  queue → worker → sink ` +
        `(SQLite)      ${d.queued.toFixed(0).padStart(6)} msg/s   ${d.queueCpuMicros.toFixed(0).padStart(4)} µs CPU/msg`,
    );
    console.log(`ratio queue/raw: ${d.ratio.toFixed(2)}x   (rounds: ${d.ratios.map((r) => r.toFixed(2)).join(', ')})`);
  }
  if (wants('provider')) {
    // 2000 messages a run (the SMTP line's 3000 would add ~45 s): its rounds still take ~2 s each.
    const p = await providerBench(
      Number(process.env.BENCH_PROVIDER_MESSAGES ?? process.env.BENCH_MESSAGES ?? 2000),
      Number(process.env.BENCH_ROUNDS ?? 5),
    );
    console.log(`delivery, ${p.messages} messages to a loopback Postmark fake, ${p.ratios.length} alternating rounds (medians):`);
    console.log(
      `  raw fetch (50 in flight)            ${p.raw.toFixed(0).padStart(6)} ` +
        `msg/s   ${p.rawCpuMicros.toFixed(0).padStart(4)} µs CPU/msg   ${p.rawBodyBytes.toFixed(0)} B/request`,
    );
    console.log(
      `  queue → worker → Postmark (SQLite)  ${p.queued.toFixed(0).padStart(6)} ` +
        `msg/s   ${p.queueCpuMicros.toFixed(0).padStart(4)} µs CPU/msg   ${p.queueBodyBytes.toFixed(0)} B/request`,
    );
    console.log(`ratio queue/raw fetch: ${p.ratio.toFixed(2)}x   (rounds: ${p.ratios.map((r) => r.toFixed(2)).join(', ')})`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
