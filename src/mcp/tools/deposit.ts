// pool_deposit. Operator mode: the proxy's operator account funds and signs the deposit for the server's one
// agent (POST /api/deposit). Wallet mode: the deposit is prepared for the wallet to sign
// (POST /api/deposit/prepare) and sent by pool_deposit_submit; a wallet never reaches the operator's funds.
import { agentIdInput, amountInput, outputs } from '../fields.ts';
import { guarded, normaliseAmount, success, type ToolContext } from '../tool-kit.ts';

export function registerOperatorDeposit({ server, api, forWhom }: ToolContext, agentId: string): void {
  server.registerTool(
    'pool_deposit',
    {
      title: 'Deposit into the pool (operator-funded)',
      description:
        `Deposits USDC into the private pool balance of ${forWhom}. The proxy's operator account pays and signs ` +
        'the on-chain transaction (a zero-knowledge proof is generated first); returns after confirmation. ' +
        'Spends the operator’s USDC.',
      inputSchema: { amount: amountInput('amount to deposit') },
      outputSchema: outputs.depositConfirmed,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async ({ amount }, extra) =>
      guarded(
        async () => {
          const normalised = normaliseAmount(amount, 'amount');
          const result = await api.operatorDeposit({ agentId, amount: normalised });
          return success(
            {
              status: result.status,
              agentId,
              amount: normalised,
              txHash: result.txHash,
              zkProof: result.zkProof,
            },
            `Deposited ${normalised} USDC for ${agentId}; transaction ${result.txHash} confirmed.`,
          );
        },
        { extra, message: 'proving the deposit and waiting for the ledger' },
      ),
  );
}

export function registerWalletDeposit({ server, api, agentOf }: ToolContext, wallet: string): void {
  server.registerTool(
    'pool_deposit',
    {
      title: 'Prepare a deposit for the wallet to sign',
      description:
        'Prepares a deposit of USDC from your wallet into the private pool balance of an agent of your wallet: ' +
        'generates the zero-knowledge proof and returns the unsigned transaction (transactionXDR) with a ' +
        'prepareId. Nothing moves until your wallet signs transactionXDR and pool_deposit_submit sends it.',
      inputSchema: { amount: amountInput('amount to deposit'), agentId: agentIdInput },
      outputSchema: outputs.depositPrepared,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (args, extra) =>
      guarded(
        async () => {
          const normalised = normaliseAmount(args.amount, 'amount');
          const agentId = agentOf(args);
          const prepared = await api.prepareDeposit({ amount: normalised, publicKey: wallet, agentId });
          return success(
            {
              status: 'prepared' as const,
              agentId,
              amount: normalised,
              prepareId: prepared.prepareId,
              transactionXDR: prepared.transactionXDR,
              expiresAt: prepared.expiresAt,
            },
            `Deposit of ${normalised} USDC for ${agentId} prepared (prepareId ${prepared.prepareId}). ` +
              `Sign transactionXDR with the wallet, then call pool_deposit_submit before ${prepared.expiresAt}.`,
          );
        },
        { extra, message: 'proving the deposit' },
      ),
  );
}
