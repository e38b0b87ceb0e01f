import type { Executor } from '../../db/schema.js';
import { conflict } from '../../errors.js';
import { newId } from '../../ids.js';
import { hashPassword } from './password.js';
import { checkNewPassword } from '../../password-rules.js';

export interface Person {
  id: string;
  email: string;
  name: string;
}

/** Emails compare without case: `Ada@Example.com` and `ada@example.com` are one person. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

export async function findPersonByEmail(executor: Executor, email: string) {
  return executor.selectFrom('people').selectAll().where('email', '=', normaliseEmail(email)).executeTakeFirst();
}

export async function findPersonById(executor: Executor, id: string): Promise<Person | undefined> {
  return executor.selectFrom('people').select(['id', 'email', 'name']).where('id', '=', id).executeTakeFirst();
}

/** The person made first (the first owner, at setup): the earliest created, the smaller id on a tie. */
export async function findFirstPerson(executor: Executor): Promise<Person | undefined> {
  return executor.selectFrom('people').select(['id', 'email', 'name']).orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
}

export async function countPeople(executor: Executor): Promise<number> {
  const row = await executor.selectFrom('people').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertPerson(
  executor: Executor,
  input: { email: string; name: string; password: string },
  now: Date,
  passwordHashCost: number,
): Promise<Person> {
  const email = normaliseEmail(input.email);
  checkNewPassword(input.password, email);
  if (await findPersonByEmail(executor, email)) throw conflict('A person with this email already exists.');
  const person = { id: newId('per', now.getTime()), email, name: input.name.trim() };
  await executor
    .insertInto('people')
    .values({ ...person, password_hash: await hashPassword(input.password, passwordHashCost), created_at: now.toISOString() })
    .execute();
  return person;
}
