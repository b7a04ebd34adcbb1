/* names.c -- board names; see names.h. */
#include "names.h"

int board_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > BOARD_NAME_LEN_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok)
            return 0;
    }
    return 1;
}
