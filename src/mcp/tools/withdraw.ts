// pool_withdraw: moves USDC from the agent's private balance to a Stellar account (POST /api/withdraw); the
// proxy proves and its operator relays the transaction. When the owner's policy asks for a fresh wallet signature
// of each withdrawal, the refusal says how to get one (the wallet-confirmation flow) and the tool takes it back
// as `confirmation`.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PoolApiError } from '../../api/client.ts';
import type { WithdrawRequest } from '../../api/types.ts';
import { agentIdInput, amountInput, destinationInput, outputs, walletConfirmationInput } from '../fields.ts';
import { guarded, normaliseAmount, problemResult, success, type ToolContext } from '../tool-kit.ts';

export function registerWithdraw({ server, api, mode, agentOf, forWhom }: ToolContext): void {
  server.registerTool(
    'pool_withdraw',
    {
      title: 'Withdraw from the pool',
      description:
        `Withdraws USDC from the private pool balance of ${forWhom} to a Stellar account (G…). A zero-knowledge ` +
        'proof is generated and the operator relays the transaction; returns after confirmation. Spends the ' +
        'agent’s balance. When the owner’s policy requires a wallet signature for each withdrawal, pass the ' +
        'owner’s signed confirmation as `confirmation` (the refusal without it says how to get one).',
      inputSchema: {
        amount: amountInput('amount to withdraw'),
        destination: destinationInput,
        confirmation: walletConfirmationInput,
        ...(mode.kind === 'wallet' ? { agentId: agentIdInput } : {}),
      },
      outputSchema: outputs.withdraw,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args: WithdrawArgs, extra) =>
      guarded(
        async () => {
          const normalised = normaliseAmount(args.amount, 'amount');
          const agentId = agentOf(args);
          let result;
          try {
            result = await api.withdraw({
              amount: normalised,
              destination: args.destination,
              agentId,
              ...(args.confirmation !== undefined ? { confirmation: args.confirmation } : {}),
            });
          } catch (error) {
            if (error instanceof PoolApiError && error.code === 'wallet_signature_required')
              return howToConfirm(error, { agentId, amount: normalised, destination: args.destination });
            throw error;
          }
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

interface WithdrawArgs {
  amount: string | number;
  destination: string;
  confirmation?: WithdrawRequest['confirmation'];
  agentId?: string;
}

/** The refusal, and how the owner confirms exactly this withdrawal with the wallet (SEP-53 signMessage). */
function howToConfirm(
  error: PoolApiError,
  w: { agentId: string; amount: string; destination: string },
): CallToolResult {
  const refusal = problemResult(error);
  const action = JSON.stringify({ withdraw: { amount: w.amount, destination: w.destination } });
  const steps =
    'The owner’s policy requires a fresh wallet signature for this withdrawal; nothing was withdrawn. To confirm ' +
    `it, the owner (signed in with the wallet) calls POST /api/agents/${encodeURIComponent(w.agentId)}/wallet-confirmation ` +
    `with ${action}, signs the returned message with the wallet (SEP-53 signMessage), and then pool_withdraw is ` +
    'called again with the same amount and destination and confirmation {"nonce": <its nonce>, "signature": ' +
    '<the signature>}. The confirmation is single-use and expires; an agent token cannot make one.';
  return { ...refusal, content: [...refusal.content, { type: 'text', text: steps }] };
}
