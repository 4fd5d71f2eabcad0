// Paged lists (audiences, contacts, webhook deliveries): a page of `limit` rows (50 unless asked) after the
// key a `cursor` names; one more row is read than the page holds, to know whether another page follows.

export const PAGE_SIZE = 50

/** A paged list's query as the schemas take it (schemas/common.ts `PageQueryFields`). */
export interface PageQuery { limit?: number, cursor?: string }

/** What to read for a page: `fetch` rows (the page and one more) after `after` (undefined: from the start). */
export function pageRead (q: PageQuery): { limit: number, fetch: number, after: number | undefined } {
  const limit = q.limit ?? PAGE_SIZE
  return { limit, fetch: limit + 1, after: q.cursor === undefined ? undefined : Number(q.cursor) }
}

/** The page out of the rows read, and the cursor of the next one: the last row's key when more followed, else null. */
export function pageOf<R> (rows: readonly R[], limit: number, key: (row: R) => number | string): { page: R[], nextCursor: string | null } {
  const page = rows.slice(0, limit)
  return { page, nextCursor: rows.length > limit ? String(key(page[page.length - 1])) : null }
}
