/** The events value that means every event, also those added in later versions. */
export const ALL_EVENTS = '*';
