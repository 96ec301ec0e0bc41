// pool_deposit_submit (wallet mode): sends the deposit pool_deposit prepared, signed by the wallet
// (POST /api/deposit/submit), and answers once it is confirmed, naming the agent credited.
import { outputs, prepareIdInput, signedXdrInput } from '../fields.ts';
import { guarded, success, type ToolContext } from '../tool-kit.ts';

export function registerDepositSubmit({ server, api }: ToolContext): void {
  server.registerTool(
    'pool_deposit_submit',
    {
      title: 'Submit a wallet-signed deposit',
      description:
        'Sends the deposit prepared by pool_deposit, signed by your wallet, and waits for on-chain confirmation. ' +
        'Moves USDC from your wallet into the pool. A prepareId works once.',
      inputSchema: { prepareId: prepareIdInput, signedTransactionXDR: signedXdrInput },
      outputSchema: outputs.depositSubmitted,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async ({ prepareId, signedTransactionXDR }, extra) =>
      guarded(
        async () => {
          const result = await api.submitDeposit({ prepareId, signedTransactionXDR });
          return success(
            {
              status: result.status,
              agentId: result.agentId,
              ...(result.amount ? { amount: result.amount } : {}),
              txHash: result.txHash,
              zkProof: result.zkProof,
            },
            `Deposit${result.amount ? ` of ${result.amount} USDC` : ''} for ${result.agentId} confirmed in ` +
              `transaction ${result.txHash}.`,
          );
        },
        { extra, message: 'waiting for the ledger to confirm the deposit' },
      ),
  );
}
