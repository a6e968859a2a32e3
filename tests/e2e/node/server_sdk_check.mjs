// The official LaunchDarkly Node server SDK pointed at Flagstaff, driven over stdin/stdout by
// tests/e2e/test_node_server_sdk.py; it reports what the SDK does and judges nothing itself.
//
//   node server_sdk_check.mjs <baseUri> <sdkKey> [stream|poll] [diagnosticSeconds]
//
// With diagnosticSeconds the SDK sends events and diagnostic events, a periodic one every that
// many seconds (the SDK's minimum is 60); without, it sends neither.
//
// Prints one JSON object per line: {"event":"ready","initialized":bool} once initialization ends,
// {"event":"update","key":...} for every flag change the SDK announces, and for each stdin line
// {"id":n,"flags":[...],"context":{...},"default":v} an {"event":"evaluation","id":n,"values":{}}.
// Closing stdin closes the client and ends the process.
import { createInterface } from 'node:readline';
import { basicLogger, init } from '@launchdarkly/node-server-sdk';

const [baseUri, sdkKey, mode = 'stream', diagnosticSeconds] = process.argv.slice(2);
const diagnostics = diagnosticSeconds === undefined ? undefined : Number(diagnosticSeconds);
if (!baseUri || !sdkKey || !['stream', 'poll'].includes(mode) || Number.isNaN(diagnostics)) {
  process.stderr.write(
    'usage: node server_sdk_check.mjs <baseUri> <sdkKey> [stream|poll] [diagnosticSeconds]\n',
  );
  process.exit(2);
}

function emit(record) {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

const client = init(sdkKey, {
  baseUri,
  streamUri: baseUri,
  eventsUri: baseUri,
  stream: mode === 'stream',
  sendEvents: diagnostics !== undefined,
  diagnosticOptOut: diagnostics === undefined,
  ...(diagnostics === undefined ? {} : { diagnosticRecordingInterval: diagnostics }),
  logger: basicLogger({ level: 'warn', destination: (line) => process.stderr.write(`${line}\n`) }),
});
client.on('update', ({ key }) => emit({ event: 'update', key }));

try {
  await client.waitForInitialization({ timeout: 20 });
} catch (error) {
  emit({ event: 'error', message: String(error) });
}
emit({ event: 'ready', initialized: client.initialized() });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  const values = {};
  for (const key of request.flags) {
    values[key] = await client.variation(key, request.context, request.default ?? null);
  }
  emit({ event: 'evaluation', id: request.id, values });
}
client.close();
// a client that gave up after a 401 keeps a timer alive for seconds; nothing is left to report
// (stdout writes to a pipe are synchronous on Linux, so exiting loses none)
process.exit(0);
