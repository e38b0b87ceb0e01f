import { Type } from 'typebox';
import { idOf, RoleName, Timestamp } from '../../schemas.js';

export const Member = Type.Object({ personId: idOf('per'), email: Type.String(), name: Type.String(), role: RoleName, joinedAt: Timestamp });
export const MemberParams = Type.Object({ personId: idOf('per') });
