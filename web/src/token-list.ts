// The agent-token panel's list (the MCP client it was given to through OAuth, id, issued, expires, Revoke) and the box that shows a new token once, with a
// Copy button and the note that it is shown only now; the token is never kept anywhere else by the page.
import type { AgentToken } from './api.ts';
import { copyButton } from './copy.ts';
import { $, el } from './dom.ts';
import { dateTime, shortAddress } from './format.ts';

export function renderTokens(tokens: readonly AgentToken[], onRevoke: (tokenId: string) => void): void {
  const list = $('tokens-list');
  list.replaceChildren(
    ...tokens.map((token) => {
      const item = el('li');
      item.dataset.token = token.tokenId;
      const what = el('span');
      const id = el('span', shortAddress(token.tokenId), 'mono');
      id.title = token.tokenId;
      if (token.client !== undefined)
        what.append(el('span', `${token.client.name} (MCP client) `, 'token-client'));
      what.append(
        id,
        el('span', ' · issued ', 'muted'),
        el('time', dateTime(token.issuedAt)),
        el('span', ' · expires ', 'muted'),
        el('time', dateTime(token.expiresAt)),
      );
      const revoke = el('button', 'Revoke', 'btn btn-small btn-danger');
      revoke.type = 'button';
      revoke.setAttribute('aria-label', `Revoke token ${token.tokenId}`);
      revoke.addEventListener('click', () => onRevoke(token.tokenId));
      item.append(what, revoke);
      return item;
    }),
  );
  if (tokens.length === 0) list.append(el('li', 'No live tokens for this agent.', 'muted'));
}

/** Shows `token` this once (empty: hides the box and forgets the text). */
export function showNewToken(token: string): void {
  const box = $('tokens-new');
  $('tokens-new-value').textContent = token;
  const copy = $('tokens-new-copy');
  copy.replaceWith(Object.assign(copyButton(token, 'agent token', 'Copy token'), { id: 'tokens-new-copy' }));
  box.hidden = token === '';
}
