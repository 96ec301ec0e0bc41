// Starts the proxy: opens the encrypted store, builds auth and the HTTP API, connects to the ledger
// and prover, and listens. `startProxy(config)` → `{ url, close() }`.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoginService } from './auth/login.ts';
import { formatAmount } from '../api/amount.ts';
import { TokenRevocations } from './auth/revocations.ts';
import { TokenService } from './auth/tokens.ts';
import type { ProxyConfig } from './config.ts';
import { ApiRouter } from './http/api-router.ts';
import { MCP_PATH, mcpHttpMiddleware } from '../mcp/http.ts';
import { newInternalCallKey } from '../http/internal-call.ts';
import { createApp } from './http/app.ts';
import { TrustedProxies } from './http/client-address.ts';
import { loadOperatorToken, OperatorCredential } from './auth/operator-token.ts';
import { createMetrics } from './util/metrics.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { webMiddleware } from './http/web.ts';
import { registerAccountRoutes } from './routes/account-routes.ts';
import { registerAuthRoutes } from './routes/auth-routes.ts';
import { registerFlowRoutes } from './routes/flow-routes.ts';
import { registerPaymentRoutes } from './routes/payment-routes.ts';
import { registerApprovalRoutes } from './routes/approval-routes.ts';
import { registerWalletConfirmationRoutes } from './routes/wallet-confirmation-routes.ts';
import { WalletConfirmations } from './auth/wallet-confirmation.ts';
import { registerServiceRoutes } from './routes/service-routes.ts';
import { registerPolicyRoutes } from './routes/policy-routes.ts';
import { registerAgentTokenRoutes } from './routes/agent-token-routes.ts';
import { OAuthRecords } from './auth/oauth-records.ts';
import { PoolOAuthProvider } from './routes/oauth-provider.ts';
import {
  oauthMiddleware,
  PROTECTED_RESOURCE_PATH,
  registerOAuthConsentRoutes,
} from './routes/oauth-routes.ts';
import { registerExportRoutes } from './routes/export-routes.ts';
import { AgentTokens } from './services/agent-tokens.ts';
import { AgentPolicies } from './services/agent-policies.ts';
import { PaymentRecords } from './payments/records.ts';
import { AgentRegistry } from './services/agents.ts';
import { sandboxFriendbotUrl } from './services/deployment.ts';
import { NoteBook } from './services/notebook.ts';
import { PoolRuntime } from './pool-runtime.ts';
import { PoolStatsService } from './services/stats.ts';
import { openEventArchive } from './services/event-archive.ts';
import { ArchiveSeal } from './services/archive-seal.ts';
import { deriveEpochKey } from './store/derived-keys.ts';
import { sessionEpoch } from './auth/session-epoch.ts';
import { EncryptedStore, StoreTamperError } from './store/encrypted-store.ts';
import { joinCluster } from './cluster/cluster.ts';
import { loadMasterKey, MasterKeyError } from './store/master-key.ts';
import { StoreDamagedError } from '../storage/open-level.ts';
import { type Clock, systemClock } from './util/clock.ts';
import { createLogger, type Logger } from './util/logger.ts';

/** The largest amount a policy's budget may name (a budget above every balance is as good as none). */
const MAX_POLICY_AMOUNT = 1_000_000_000n * 10_000_000n;

export interface ProxyHandle {
  url: string;
  /** Resolves once the ledger and prover are connected and the indexer has caught up. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** what decides expiries (default: the system clock); tests move their own forward */
  clock?: Clock;
}

/** The command that rebuilds this proxy's store (src/cli/commands/store.ts). */
export function recoverCommand(config: ProxyConfig): string {
  return `pool-proxy store recover --data-dir ${config.dataDir}`;
}

export async function startProxy(config: ProxyConfig, options: StartOptions = {}): Promise<ProxyHandle> {
  const logger = options.logger ?? createLogger();
  const clock = options.clock ?? systemClock;
  const masterKey = loadMasterKey(
    config.masterKeyHex,
    config.masterKeyFile,
    config.databaseUrl ? undefined : config.storeDir,
  );
  // The operator's token (made on first start) before anything is opened: a bad token file stops the start.
  const operatorCredential = new OperatorCredential(loadOperatorToken(config.operator.tokenFile));
  const where = config.databaseUrl ? 'the PostgreSQL store' : `the store in ${config.storeDir}`;
  const store = await EncryptedStore.open(config.databaseUrl || config.storeDir, masterKey).catch(
    (error: unknown) => {
      if (error instanceof StoreTamperError) {
        const source =
          config.masterKeyHex !== ''
            ? 'POOL_PROXY_MASTER_KEY'
            : `the master key file ${config.masterKeyFile}`;
        throw new MasterKeyError(
          `${source} does not open ${where}: the store was made with another master key ` +
            `(or its key-check record was modified). Start with the key the store was made with.`,
        );
      }
      if (!(error instanceof StoreDamagedError)) throw error;
      throw new StoreDamagedError(
        error.dir,
        error.damage,
        `To move it aside and rebuild it from the master key and the chain, run: ${recoverCommand(config)}`,
      );
    },
  );
  // The pool's events as the indexer reads them, kept beside the store (which `store recover` replaces).
  const archive = await openEventArchive(store, config.eventArchiveDir, new ArchiveSeal(masterKey)).catch(
    async (error: unknown) => {
      await store.close();
      throw error;
    },
  );
  const cluster = await joinCluster(store, logger, clock).catch(async (error: unknown) => {
    await archive.close();
    await store.close();
    throw error;
  });
  const metrics = createMetrics();
  // Tokens and login challenges belong to the store's session epoch, which `store recover` renews.
  const epoch = await sessionEpoch(store);
  const tokens = new TokenService(masterKey, config.jwt, new TokenRevocations(store), clock, epoch);
  const publicUrl = new URL(config.publicUrl);
  const login = new LoginService(
    store,
    tokens,
    {
      domain: publicUrl.host,
      uri: publicUrl.origin,
      network: config.ledger.network,
      challengeTtlSeconds: config.challengeTtlSeconds,
      challengeKey: deriveEpochKey(masterKey, 'challenge-mac', epoch),
    },
    clock,
  );

  const trustedProxies = new TrustedProxies(config.trustedProxies);
  const ipLimiter =
    cluster?.limiter('ip', config.rateLimit.ip) ?? new RateLimiter(config.rateLimit.ip, clock);
  const api = new ApiRouter({
    tokens,
    operator: {
      credential: operatorCredential,
      loopback: config.operator.loopback,
      trustedProxies,
    },
    tokenLimiter:
      cluster?.limiter('token', config.rateLimit.token) ?? new RateLimiter(config.rateLimit.token, clock),
    ipLimiter,
    metrics,
    maxBodyBytes: config.limits.maxBodyBytes,
  });
  registerServiceRoutes(api, {
    metrics,
    publicUrl: config.publicUrl,
    starting: () => pool.starting(),
    details: async () => {
      const { float } = await pool.health().catch(() => ({ float: undefined }));
      if (float === undefined) return {};
      const low = float < config.limits.paymentCap;
      return {
        poolWalletFloat: formatAmount(float),
        ...(low && {
          warnings: [
            'the pool wallet float is below the per-payment cap: payments are refused until it is topped up',
          ],
        }),
      };
    },
  });
  registerAuthRoutes(api, login, tokens);
  const agents = new AgentRegistry(store, clock);
  const notes = new NoteBook(store);
  const stats = new PoolStatsService(store, agents);
  registerAccountRoutes(api, agents, notes, stats);
  const pool = new PoolRuntime({
    config,
    store,
    masterKey,
    agents,
    notes,
    metrics,
    logger,
    stats,
    cluster,
    clock,
    archive,
  });
  const policies = new AgentPolicies(store);
  const confirmations = new WalletConfirmations(
    store,
    { domain: publicUrl.host, network: config.ledger.network },
    clock,
  );
  registerFlowRoutes(api, pool, {
    withdrawals: { policies, confirmations },
    maxDeposit: config.limits.maxDeposit,
    maxWithdraw: config.limits.maxWithdraw,
    paymentCap: config.limits.paymentCap,
    payments: config.payments,
    registration: config.registration,
  });
  registerPaymentRoutes(api, pool, config.limits.paymentCap);
  registerApprovalRoutes(api, pool);
  const operatorLimits = {
    paymentCap: config.limits.paymentCap,
    budgetPerHour: config.payments.budgetPerHour,
    budgetPerDay: config.payments.budgetPerDay,
  };
  registerPolicyRoutes(api, {
    agents,
    policies,
    records: new PaymentRecords(store),
    runtime: pool,
    operator: operatorLimits,
    maxAmount: MAX_POLICY_AMOUNT,
    confirmations,
  });
  registerWalletConfirmationRoutes(api, {
    agents,
    policies,
    confirmations,
    maxWithdraw: config.limits.maxWithdraw,
    maxPolicyAmount: MAX_POLICY_AMOUNT,
    operator: operatorLimits,
    clock,
  });
  registerExportRoutes(api, agents, pool);
  const agentTokens = new AgentTokens(store);
  registerAgentTokenRoutes(api, { agents, records: agentTokens, tokens, clock });
  // MCP authorization: this proxy is /mcp's OAuth authorization server; what a client gets is an agent token.
  const oauthRecords = new OAuthRecords(store);
  const mcpResource = `${config.publicUrl}${MCP_PATH}`;
  const oauthDeps = {
    provider: new PoolOAuthProvider({
      records: oauthRecords,
      agentTokens,
      tokens,
      clock,
      resource: mcpResource,
      consentPage: `${config.publicUrl}/`,
    }),
    records: oauthRecords,
    agents,
    clock,
    publicUrl: config.publicUrl,
    resource: mcpResource,
  };
  registerOAuthConsentRoutes(api, oauthDeps);

  const friendbot = sandboxFriendbotUrl(config.ledger);
  const web = webMiddleware({ connectOrigins: friendbot ? [new URL(friendbot).origin] : [] });
  const internalCallKey = newInternalCallKey();
  const app = createApp({
    api,
    metrics,
    internalCallKey,
    trustedProxies,
    ipLimiter,
    logger,
    web,
    oauth: oauthMiddleware(oauthDeps),
  });
  // MCP over Streamable HTTP at /mcp (src/mcp/http.ts): its tools call this REST API in process (the app's own
  // handler, complete once every middleware is in) with the caller's token.
  const verifyToken = (token: string) => tokens.verify(token);
  app.use(
    mcpHttpMiddleware({
      handler: () => handler,
      verifyToken,
      takeWalletRate: (wallet, agent) => api.takeWalletRate(wallet, agent),
      internalCallKey,
      maxBodyBytes: config.limits.maxBodyBytes,
      allowedOrigins: new Set([publicUrl.origin, ...config.mcpAllowedOrigins]),
      resourceMetadataUrl: `${config.publicUrl}${PROTECTED_RESOURCE_PATH}`,
    }),
  );
  const handler = app.callback();
  const server: Server = createServer(handler);
  server.headersTimeout = 20_000;
  server.requestTimeout = 120_000;
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  const sweeper = setInterval(() => {
    Promise.all([
      login.sweepExpired(),
      confirmations.sweepExpired(),
      tokens.sweepRevocations(),
      agentTokens.sweepExpired(clock() / 1000),
      oauthRecords.sweepExpired(clock() / 1000),
      pool.sweep(),
    ]).catch((error) => logger.log('warn', 'sweep failed', { error: String(error) }));
  }, 60_000);
  sweeper.unref();
  logger.log('info', 'proxy listening', { url, operatorTokenFile: config.operator.tokenFile });
  if (config.operator.loopback)
    logger.log(
      'warn',
      'POOL_PROXY_OPERATOR_LOOPBACK: loopback callers act as the operator without its token; for single-host ' +
        'development only (behind a reverse proxy, tunnel or port forward on this host, anyone would)',
    );
  pool.start();

  return {
    url,
    ready: pool.ready,
    async close() {
      clearInterval(sweeper);
      await pool.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await cluster?.close();
      await archive.close();
      await store.close();
      logger.log('info', 'proxy stopped', { url });
    },
  };
}
