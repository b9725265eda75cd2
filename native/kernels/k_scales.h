// The 6-bit scale (.x) and min (.y) of group g (0..7) of a Q4_K or Q5_K block, from its 12 scale bytes: groups 0..3
// are the low 6 bits of bytes g (scale) and g + 4 (min); groups 4..7 take their low 4 bits from the nibbles of byte
// g + 4 and their top 2 bits from the spare top bits of bytes g - 4 (scale) and g (min).
#ifndef FS_K_SCALES_H
#define FS_K_SCALES_H

static int2 k_scale_min(__global const uchar* scales, int g) {
    if (g < 4) return (int2)(scales[g] & 0x3F, scales[g + 4] & 0x3F);
    int low = scales[g + 4];
    return (int2)((low & 0xF) | (scales[g - 4] >> 6) << 4, (low >> 4) | (scales[g] >> 6) << 4);
}

#endif
