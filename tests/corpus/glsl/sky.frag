#version 450
in vec3 v_dir;
in vec3 v_sun;
layout(location = 0) out vec4 color;
void main() {
    vec3 d = normalize(v_dir);
    vec3 c = vec3(0.0);
    float t = 0.0;
    for (int i = 0; i < 8; ++i) {
        t += 0.125;
        c += exp(-t * max(d.y, 0.01)) * vec3(0.2, 0.4, 0.9) * 0.125;
    }
    c += pow(max(dot(d, v_sun), 0.0), 256.0);
    color = vec4(c, 1.0);
}
