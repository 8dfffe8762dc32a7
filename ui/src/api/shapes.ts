/**
 * Readable names into the admin API's types generated from the served OpenAPI document
 * (./generated/openapi.ts, `npm run ui:types`). Routes are named as the client calls them, without
 * `/admin/v1`. No DOM, no runtime code beside `allOf`: ui/src/lib and the unit tests share it.
 */
import type { components, paths } from './generated/openapi.js';

type Admin = { [P in keyof paths as P extends `/admin/v1${infer R}` ? R : never]: paths[P] };
export type AdminRoute = keyof Admin;
type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
type Operation<R extends AdminRoute, M extends Method> = NonNullable<Admin[R][M]>;
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON of the operation's success answer (its 200, 201 or 202; a PUT's 200 and 201 are the same shape). */
export type Answer<R extends AdminRoute, M extends Method> =
  Operation<R, M> extends { responses: infer S } ? Json<S[keyof S & (200 | 201 | 202)]> : never;

/** The JSON body the operation takes. */
export type RequestBody<R extends AdminRoute, M extends Method> =
  Operation<R, M> extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;

/** The operation's query parameters. */
export type Query<R extends AdminRoute, M extends Method> =
  Operation<R, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** One entry of a list answer's `items`. */
export type Item<R extends AdminRoute> = Answer<R, 'get'> extends { items: ReadonlyArray<infer I> } ? I : never;

/** A schema the document names under components (ErrorEnvelope, Template, …). */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

/**
 * A list the UI shows in order (a select's options), checked against the generated union `U`: a value
 * the server does not know, or one it added that the list leaves out, is a type error here.
 */
export const allOf =
  <U extends string | number>() =>
  <const L extends readonly U[]>(values: L & ([U] extends [L[number]] ? unknown : { missing: Exclude<U, L[number]> })): L =>
    values;
