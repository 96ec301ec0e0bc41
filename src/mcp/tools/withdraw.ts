// pool_withdraw: moves USDC from the agent's private balance to a Stellar account (POST /api/withdraw); the
// proxy proves and its operator relays the transaction.
import { agentIdInput, amountInput, destinationInput, outputs } from '../fields.ts';
import { guarded, normaliseAmount, success, type ToolContext } from '../tool-kit.ts';

export function registerWithdraw({ server, api, mode, agentOf, forWhom }: ToolContext): void {
  server.registerTool(
    'pool_withdraw',
    {
      title: 'Withdraw from the pool',
      description:
        `Withdraws USDC from the private pool balance of ${forWhom} to a Stellar account (G…). A zero-knowledge ` +
        'proof is generated and the operator relays the transaction; returns after confirmation. Spends the ' +
        'agent’s balance.',
      inputSchema: {
        amount: amountInput('amount to withdraw'),
        destination: destinationInput,
        ...(mode.kind === 'wallet' ? { agentId: agentIdInput } : {}),
      },
      outputSchema: outputs.withdraw,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args: { amount: string | number; destination: string; agentId?: string }, extra) =>
      guarded(
        async () => {
          const normalised = normaliseAmount(args.amount, 'amount');
          const agentId = agentOf(args);
          const result = await api.withdraw({ amount: normalised, destination: args.destination, agentId });
          return success(
            {
              status: result.status,
              agentId,
              amount: result.amount,
              destination: result.destination,
              txHash: result.txHash,
              zkProof: result.zkProof,
            },
            `Withdrew ${result.amount} USDC from ${agentId} to ${result.destination}; transaction ${result.txHash} confirmed.`,
          );
        },
        { extra, message: 'proving the withdrawal and waiting for the ledger' },
      ),
  );
}
