// Wallet login endpoints: SEP-53 challenge and its verification into a JWT, and Log out (the token is revoked
// on the server until it would have expired).
import type { LoginService } from '../auth/login.ts';
import type { TokenService } from '../auth/tokens.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { requestLog } from '../http/request-context.ts';
import { AuthChallenge, AuthToken, ChallengeQuery, LogoutResult, VerifyRequest } from '../../api/schemas.ts';

export function registerAuthRoutes(api: ApiRouter, login: LoginService, tokens: TokenService): void {
  api.add({
    method: 'get',
    path: '/api/auth/challenge',
    summary: 'Get a single-use sign-in challenge for a wallet',
    description:
      'Returns a human-readable message (domain, address, network, nonce, issue and expiry time, valid ≤ 5 minutes). ' +
      'The service stores nothing for it: the nonce is 128 random bits plus a MAC over the other fields. ' +
      'Sign it with SEP-53 (`Keypair.signMessage`, Freighter `signMessage`) and send it to /api/auth/verify.',
    tag: 'auth',
    access: 'public',
    query: ChallengeQuery,
    response: AuthChallenge,
    errors: ['invalid_request'],
    handler: async ({ query }) => ({ challenge: await login.challenge(query.publicKey) }),
  });

  api.add({
    method: 'post',
    path: '/api/auth/verify',
    summary: 'Exchange a signed challenge for a JWT',
    description:
      'The challenge is consumed by the first attempt, successful or not (its nonce is kept until it expires). The token is an EdDSA JWT whose `sub` is the wallet address.',
    tag: 'auth',
    access: 'public',
    body: VerifyRequest,
    response: AuthToken,
    errors: ['unauthorized'],
    handler: async ({ body, ctx }) => {
      const result = await login.verify(body);
      requestLog(ctx).log('info', 'login', { wallet: body.publicKey });
      return result;
    },
  });

  api.add({
    method: 'post',
    path: '/api/auth/logout',
    summary: 'Log out: end this token on the server',
    description:
      'The token in the Authorization header is refused from now on (401), also after a restart of the service, ' +
      'until it would have expired. Other tokens of the same wallet stay valid. A second logout with the same ' +
      'token answers 401 like any other use of it.',
    tag: 'auth',
    access: 'wallet',
    response: LogoutResult,
    errors: [],
    handler: async ({ auth, ctx }) => {
      await tokens.revoke(auth);
      requestLog(ctx).log('info', 'logout', { wallet: auth.sub });
      return { loggedOut: true as const, tokenExpiresAt: new Date(auth.exp * 1000).toISOString() };
    },
  });
}
