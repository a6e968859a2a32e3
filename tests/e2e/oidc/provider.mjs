// A real OpenID provider (panva's certified oidc-provider) for Flagstaff's single sign-on tests.
// Usage: node provider.mjs REDIRECT_URI. It listens on a free loopback port and prints one JSON
// line, {"issuer": ...}, once it serves. Any login with any password signs in (the package's
// development interactions); the account's groups come from GROUPS below.
//
// The tests steer it through POST /_test/* (never part of a real provider):
//   /_test/mode?to=forge   the next ID tokens are re-signed with a key the provider never
//                          published, under the published key id (a bad signature)
//   /_test/mode?to=expire  ... re-signed with the real key but expired an hour ago
//   /_test/mode?to=normal  the provider's own tokens again
//   /_test/rotate          a new signing key with a new key id replaces the old one
import http from 'node:http';
import Provider from 'oidc-provider';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK } from 'jose';

const [redirectUri] = process.argv.slice(2);
if (!redirectUri) {
  process.stderr.write('usage: node provider.mjs REDIRECT_URI\n');
  process.exit(2);
}

const CLIENT_ID = 'flagstaff';
const CLIENT_SECRET = 'flagstaff-test-secret';
const GROUPS = { ada: ['engineering', 'everyone'], bob: ['everyone'] };

let serial = 0;
async function signingKey() {
  serial += 1;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `key-${serial}-${Date.now()}`, alg: 'RS256', use: 'sig' };
}

let mode = 'normal';
let currentKey = await signingKey();
const forgeryKey = await signingKey();

function configuration(key) {
  return {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    jwks: { keys: [key] },
    cookies: { keys: ['flagstaff-test-cookie-key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    scopes: ['openid', 'email', 'profile', 'groups'],
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    async findAccount(ctx, id) {
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            email: `${id}@example.com`,
            email_verified: true,
            name: `${id[0].toUpperCase()}${id.slice(1)} Tester`,
            groups: GROUPS[id] ?? [],
          };
        },
      };
    },
    // no consent screen: the test client is trusted
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId
        || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
  };
}

async function tampered(idToken) {
  const header = decodeProtectedHeader(idToken);
  const claims = decodeJwt(idToken);
  const now = Math.floor(Date.now() / 1000);
  if (mode === 'expire') {
    Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
    return new SignJWT(claims).setProtectedHeader(header).sign(await importJWK(currentKey, 'RS256'));
  }
  return new SignJWT(claims).setProtectedHeader(header).sign(await importJWK(forgeryKey, 'RS256'));
}

function build(issuer) {
  const provider = new Provider(issuer, configuration(currentKey));
  provider.proxy = false;
  provider.use(async (ctx, next) => {
    await next();
    if (mode !== 'normal' && ctx.oidc?.route === 'token' && ctx.body?.id_token) {
      ctx.body = { ...ctx.body, id_token: await tampered(ctx.body.id_token) };
    }
  });
  return provider.callback();
}

let handler = null;
let issuer = null;
const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, issuer);
  if (req.method === 'POST' && url.pathname === '/_test/mode') {
    mode = url.searchParams.get('to') ?? 'normal';
    res.writeHead(204).end();
  } else if (req.method === 'POST' && url.pathname === '/_test/rotate') {
    currentKey = await signingKey();
    handler = build(issuer);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kid: currentKey.kid }));
  } else {
    handler(req, res);
  }
});
server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  handler = build(issuer);
  process.stdout.write(`${JSON.stringify({ issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
