// Compile-time: the package's types of the bodies (lib/types.ts) are openapi.json's, as
// openapi-typescript generates them (./api.ts): an answer the document allows fits the
// package's type and the other way round; a body the package's type allows is one the
// document allows, with the same fields. A field added, dropped or retyped on one side only
// does not compile.

import type {
  BankLine,
  Booking,
  ReconciledLine,
  ReconcileRequest,
  ReconcileResult,
  SearchResult,
  StatusResult,
} from 'booking-search-server';
import type { components } from './api.js';

type Schemas = components['schemas'];
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Each side assignable to the other: the same values, however the types are written. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Every value of `A` is one of `B`, and both have the same fields. */
type Within<A, B> = [A] extends [B] ? Equal<keyof A, keyof B> : false;

export const answers: [
  Same<Booking, Schemas['Booking']>,
  Same<SearchResult, Schemas['SearchResult']>,
  // The document fixes `version` at "1.0"; the package's type says a string.
  Within<Schemas['Status'], StatusResult>,
  Same<ReconcileResult, Schemas['ReconcileResult']>,
  Same<ReconciledLine, Schemas['ReconciledLine']>,
] = [true, true, true, true, true];

// `teile` is 1, 2 or 3 in the package's type, an integer 1–3 in the document.
export const requests: [Within<ReconcileRequest, Schemas['ReconcileRequest']>, Within<BankLine, Schemas['BankLine']>] =
  [true, true];
