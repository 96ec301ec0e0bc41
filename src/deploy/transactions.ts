// One operation as a transaction through any Soroban RPC, as a deployment sends it: simulated and assembled
// (rpc.Server.prepareTransaction), signed, sent, and followed until the ledger has decided it. Each refusal
// names the step and what the ledger said.
import { BASE_FEE, type Keypair, rpc, TransactionBuilder, type xdr } from '#stellar-sdk';
import type { LedgerAccess } from '../ledger/ledger-access.ts';

/** A deployment step the ledger refused or did not decide. */
export class DeployStepError extends Error {
  constructor(
    readonly step: string,
    detail: string,
  ) {
    super(`${step}: ${detail}`);
    this.name = 'DeployStepError';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The result code of a failed transaction's result (and of its operation's), for messages. */
function resultCode(result: xdr.TransactionResult | undefined): string {
  if (!result) return 'unknown result';
  const r = result.result;
  const op = r.type === 'txFailed' ? r.value[0] : undefined;
  const inner = op?.type === 'opInner' ? op.value.value : undefined;
  const detail = inner && typeof inner === 'object' && 'type' in inner ? String(inner.type) : op?.type;
  return detail ? `${r.type} (${detail})` : r.type;
}

/**
 * Sends `operation` signed by `signer` (its source) and waits for it; returns the invocation's return value.
 * TRY_AGAIN_LATER (another transaction of the signer is queued) is retried.
 */
export async function sendOperation(
  access: LedgerAccess,
  step: string,
  signer: Keypair,
  operation: xdr.Operation,
): Promise<xdr.ScVal | undefined> {
  const { server, networkPassphrase } = access;
  const pollMs = access.pollMs ?? 1000;
  const deadline = Date.now() + (access.timeoutMs ?? 120_000);
  for (;;) {
    const account = await server.getAccount(signer.publicKey());
    const fee = String(access.inclusionFee ?? BASE_FEE);
    const built = new TransactionBuilder(account, { fee, networkPassphrase })
      .addOperation(operation)
      .setTimeout(300)
      .build();
    let prepared;
    try {
      prepared = await server.prepareTransaction(built);
    } catch (e) {
      throw new DeployStepError(step, `simulation failed: ${(e as Error).message}`);
    }
    prepared.sign(signer);
    const sent = await server.sendTransaction(prepared);
    if (sent.status === 'TRY_AGAIN_LATER') {
      if (Date.now() > deadline) throw new DeployStepError(step, 'the RPC kept answering TRY_AGAIN_LATER');
      await sleep(pollMs);
      continue;
    }
    if (sent.status === 'ERROR')
      throw new DeployStepError(step, `refused by the RPC: ${resultCode(sent.errorResult)}`);
    for (;;) {
      const got = await server.getTransaction(sent.hash);
      if (got.status === rpc.Api.GetTransactionStatus.SUCCESS) return got.returnValue;
      if (got.status === rpc.Api.GetTransactionStatus.FAILED)
        throw new DeployStepError(step, `transaction ${sent.hash} failed: ${resultCode(got.resultXdr)}`);
      if (Date.now() > deadline)
        throw new DeployStepError(
          step,
          `transaction ${sent.hash} was not decided in time; run the deployment again`,
        );
      await sleep(pollMs);
    }
  }
}
