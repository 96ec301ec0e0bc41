// `pool-proxy start --replicas N`: the environment of each of N proxies sharing one PostgreSQL store, on
// consecutive ports from POOL_PROXY_PORT. They answer as one service: the public URL (login challenges'
// domain, the JWT issuer and audience) is the first replica's unless POOL_PROXY_PUBLIC_URL names the load
// balancer, so a token issued by one replica is taken by the others.
import type { Env, ProxyConfig } from '../../proxy/config.ts';

export function replicaEnvs(env: Env, config: ProxyConfig, flag: string): Env[] {
  if (!/^[0-9]+$/.test(flag) || Number(flag) < 1 || Number(flag) > 64)
    throw new Error(`--replicas must be a whole number from 1 to 64, got "${flag}"`);
  const count = Number(flag);
  if (count === 1) return [{}];
  if (config.databaseUrl === '')
    throw new Error(
      '--replicas needs POOL_PROXY_DATABASE_URL: replicas share their store in PostgreSQL (LevelDB admits one process)',
    );
  if (config.port === 0)
    throw new Error('--replicas needs a fixed POOL_PROXY_PORT (the first replica’s port)');
  if (config.port + count - 1 > 65535)
    throw new Error(`ports ${config.port}…${config.port + count - 1} do not exist`);
  const publicUrl = env.POOL_PROXY_PUBLIC_URL || config.publicUrl;
  return Array.from({ length: count }, (_, i) => ({
    POOL_PROXY_PORT: String(config.port + i),
    POOL_PROXY_PUBLIC_URL: publicUrl,
  }));
}
