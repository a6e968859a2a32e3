// The official LaunchDarkly Node server SDK in a game day (real_sdks.node_sdk runs it):
//
//   node node_sdk.mjs <sdkDir> <baseUri> <sdkKey> <flagKey> <contextKey> <default> <everyMs>
//
// <sdkDir> holds node_modules/@launchdarkly/node-server-sdk (tests/e2e/node after
// `make node-deps`). The SDK streams from <baseUri>; every <everyMs> it evaluates <flagKey> for
// the user <contextKey> with <default> as the code default and prints {"value": ...} as one JSON
// line whenever the value served changes (the first one at once). It judges nothing itself.
// Closing stdin (or SIGTERM) closes the client and ends the process.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [sdkDir, baseUri, sdkKey, flagKey, contextKey, fallback, everyMs] = process.argv.slice(2);
if (!sdkDir || !baseUri || !sdkKey || !flagKey || !contextKey || fallback === undefined) {
  process.stderr.write(
    'usage: node node_sdk.mjs <sdkDir> <baseUri> <sdkKey> <flagKey> <contextKey> <default> <everyMs>\n',
  );
  process.exit(2);
}
const requireFromSdk = createRequire(join(sdkDir, 'package.json'));
const { basicLogger, init } = requireFromSdk('@launchdarkly/node-server-sdk');

const client = init(sdkKey, {
  baseUri,
  streamUri: baseUri,
  eventsUri: baseUri,
  sendEvents: false,
  diagnosticOptOut: true,
  streamInitialReconnectDelay: 0.2,
  logger: basicLogger({ level: 'error', destination: (line) => process.stderr.write(`${line}\n`) }),
});
const context = { kind: 'user', key: contextKey };
let last;

async function evaluate() {
  const value = await client.variation(flagKey, context, fallback);
  if (value !== last) {
    last = value;
    process.stdout.write(`${JSON.stringify({ value })}\n`);
  }
}

await evaluate();
const timer = setInterval(evaluate, Number(everyMs) || 100);

function stop() {
  clearInterval(timer);
  client.close();
  process.exit(0);
}
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
