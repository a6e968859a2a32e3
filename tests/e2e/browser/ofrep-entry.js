// Bundled by the browser tests into build/ofrep.js (global `OFREP`): OpenFeature's web SDK and OFREP provider.
export { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
export { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
