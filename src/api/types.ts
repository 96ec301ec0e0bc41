// The REST API's request and answer types, inferred from the zod schemas that validate them
// (schemas.ts): one definition each, imported by the proxy, its clients (MCP, the demo, the web page)
// and its tests. Only types: importing this file adds no code to a bundle.
import type { z } from 'zod';
import type * as S from './schemas.ts';

// ---- requests (what a caller sends; defaults not yet applied) ----
export type AuthVerifyRequest = z.input<typeof S.VerifyRequest>;
export type DepositPrepareRequest = z.input<ReturnType<typeof S.depositPrepareRequest>>;
export type DepositSubmitRequest = z.input<typeof S.DepositSubmitRequest>;
export type OperatorDepositRequest = z.input<ReturnType<typeof S.operatorDepositRequest>>;
export type WithdrawRequest = z.input<ReturnType<typeof S.withdrawRequest>>;
export type PayRequest = z.input<ReturnType<typeof S.payRequest>>;
export type AgentPolicyRequest = z.input<ReturnType<typeof S.policyRequest>>;
/** A policy request as the proxy reads it: amounts parsed into stroops. */
export type AgentPolicyChange = z.output<ReturnType<typeof S.policyRequest>>;
export type AgentTokenRequest = z.input<typeof S.AgentTokenRequest>;
export type WalletConfirmationRequest = z.input<ReturnType<typeof S.walletConfirmationRequest>>;
export type UnfreezeRequest = z.input<typeof S.UnfreezeRequest>;

// ---- answers ----
export type Health = z.infer<typeof S.Health>;
export type Liveness = z.infer<typeof S.Liveness>;
export type AuthChallenge = z.infer<typeof S.AuthChallenge>;
export type AuthToken = z.infer<typeof S.AuthToken>;
export type LogoutResult = z.infer<typeof S.LogoutResult>;
export type PreparedDeposit = z.infer<typeof S.PreparedDeposit>;
export type CancelledDeposit = z.infer<typeof S.CancelledDeposit>;
export type DepositResult = z.infer<typeof S.DepositResult>;
export type WithdrawResult = z.infer<typeof S.WithdrawResult>;
export type Balance = z.infer<typeof S.Balance>;
export type AgentList = z.infer<typeof S.AgentList>;
export type PaymentReceipt = z.infer<typeof S.PaymentReceipt>;
export type PaymentResult = z.infer<typeof S.PaymentResult>;
export type PaymentDryRun = z.infer<typeof S.PaymentDryRun>;
export type PaymentList = z.infer<typeof S.PaymentList>;
export type PaymentListEntry = PaymentList['payments'][number];
export type BatchSummary = z.infer<typeof S.BatchSummary>;
export type PoolStats = z.infer<typeof S.PoolStats>;
export type PoolInfo = z.infer<typeof S.PoolInfo>;
export type OperatorBooks = z.infer<typeof S.OperatorBooks>;
export type AgentPolicyView = z.infer<typeof S.AgentPolicyView>;
export type AgentTokenIssued = z.infer<typeof S.AgentTokenIssued>;
export type AgentTokenList = z.infer<typeof S.AgentTokenList>;
export type AgentTokenRevoked = z.infer<typeof S.AgentTokenRevoked>;
export type OAuthRequestView = z.infer<typeof S.OAuthRequestView>;
export type OAuthApproval = z.input<typeof S.OAuthApproval>;
export type OAuthDecision = z.infer<typeof S.OAuthDecision>;
export type PaymentExport = z.infer<typeof S.PaymentExport>;
export type ApprovalList = z.infer<typeof S.ApprovalList>;
export type ApprovalDecision = z.infer<typeof S.ApprovalDecision>;
export type WalletConfirmationMessage = z.infer<typeof S.WalletConfirmationMessage>;
