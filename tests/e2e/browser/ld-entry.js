// Bundled by the browser tests into build/ld.js (global `LD`): the official LaunchDarkly browser SDK.
export { basicLogger, createClient } from '@launchdarkly/js-client-sdk';
