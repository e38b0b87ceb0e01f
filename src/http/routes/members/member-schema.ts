import { Type } from 'typebox';
import { EXAMPLE_TIME, idOf, RoleName, Timestamp } from '../../schemas.js';

export const Member = Type.Object(
  { personId: idOf('per'), email: Type.String(), name: Type.String(), role: RoleName, joinedAt: Timestamp },
  { examples: [{ personId: 'per_01jbx3q4r5s6t7v8w9x0y1z2a3', email: 'grace@example.com', name: 'Grace Hopper', role: 'editor', joinedAt: EXAMPLE_TIME }] },
);
export const MemberParams = Type.Object({ personId: idOf('per') });
